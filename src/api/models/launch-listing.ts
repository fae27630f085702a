import type { LaunchRequest } from '../../supervisor/launch-request.js';

/**
 * Launch options whose names say they hold a credential (`hf_token`, `api_key`,
 * `password`): a word of the name, not a piece of one (`tokenizer_mode` and
 * `max_num_batched_tokens` are settings).
 */
const SECRET_OPTION = /(^|_)(token|key|api_?key|password|passwd|secret|credentials?)$/i;

/**
 * A kept launch (autostart, on demand) as it is listed to anyone with `models:list`:
 * every `envs` value hidden, and the engine options named like credentials. Only the
 * variables were hidden before; `hf_token` as a launch option (vLLM takes it) was shown.
 */
export function listedLaunch(request: LaunchRequest): Record<string, unknown> {
  const hide = (entries: Record<string, unknown>, all: boolean) => Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, all || SECRET_OPTION.test(k) ? '[redacted]' : v]));
  return {
    ...request,
    envs: request.envs ? hide(request.envs, true) : undefined,
    engine_kwargs: request.engine_kwargs ? hide(request.engine_kwargs, false) : undefined,
  };
}
