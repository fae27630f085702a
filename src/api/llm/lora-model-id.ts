import type { FastifyInstance } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { ModelInstance } from '../../supervisor/model-instance.js';
import type { Supervisor } from '../../supervisor/supervisor.js';

/** The routes where `model` may name an adapter (vLLM's way): Anthropic's too (Claude Code's ANTHROPIC_MODEL=<uid>:<adapter>). */
const ROUTES: ReadonlySet<string> = new Set([
  '/v1/chat/completions', '/v1/completions', '/v1/responses',
  '/v1/messages', '/anthropic/v1/messages', '/v1/messages/count_tokens', '/anthropic/v1/messages/count_tokens',
]);

/**
 * vLLM serves each LoRA adapter under its own model id; here that id is
 * `<uid>:<lora_name>` (GET /v1/models lists them, with `parent`). Before anything
 * reads `model` (key limits, usage, metrics, the route), such an id becomes the
 * model's uid plus Xinference's `lora_name`, so both ways of asking meet in one place.
 */
export function installLoraModelIds(app: FastifyInstance, supervisor: Supervisor): void {
  // Callback style, not async: every request passes through, and most leave at once.
  app.addHook('preValidation', (request, _reply, done) => {
    if (!ROUTES.has(request.routeOptions.url ?? '')) return done();
    try {
      rewrite(request.body, supervisor);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
}

/** `model: "<uid>:<lora_name>"` becomes `model: "<uid>", lora_name: "<lora_name>"`; anything else is left. */
function rewrite(body: unknown, supervisor: Supervisor): void {
  const fields = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : null;
  const model = fields?.model;
  if (!fields || typeof model !== 'string') return;
  const at = model.lastIndexOf(':');
  // `serves`: an on-demand entry not loaded yet answers to its adapters' ids too.
  if (at <= 0 || supervisor.serves(model)) return;
  const uid = model.slice(0, at);
  if (!supervisor.serves(uid)) return;
  const lora = model.slice(at + 1);
  if (typeof fields.lora_name === 'string' && fields.lora_name !== '' && fields.lora_name !== lora) {
    throw new HangarError('invalid_field', [`lora_name: ${fields.lora_name} differs from the adapter ${lora} that model ${model} names`], { param: 'lora_name' });
  }
  fields.model = uid;
  fields.lora_name = lora;
}

/**
 * A `lora_name` the READY model does not have is refused here, naming the field and
 * the adapters it has (the runtime would refuse it too, without naming the field).
 */
export function checkLoraName(instance: ModelInstance, lora: unknown): void {
  if (typeof lora !== 'string' || lora === '' || instance.state !== 'READY') return;
  const described = instance.describe().lora_names;
  const names = Array.isArray(described) ? described.filter((n): n is string => typeof n === 'string') : [];
  if (names.includes(lora)) return;
  const have = names.length > 0 ? names.join(', ') : 'none (launch with peft_model_config.lora_list)';
  throw new HangarError('invalid_field', [`lora_name: ${lora} is not a LoRA adapter of model ${instance.uid}; its adapters: ${have}`], { param: 'lora_name' });
}

/** GET /v1/models items for a model's adapters: `<uid>:<lora_name>`, with `parent`. */
export function adapterItems(described: Record<string, unknown>): Array<Record<string, unknown>> {
  const names = Array.isArray(described.lora_names) ? described.lora_names.filter((n): n is string => typeof n === 'string') : [];
  return names.map((name) => ({
    id: `${String(described.id)}:${name}`,
    object: 'model',
    created: described.created,
    owned_by: described.owned_by,
    parent: described.id,
    root: described.id,
    model_type: described.model_type,
    model_name: described.model_name,
    model_engine: described.model_engine,
    model_ability: described.model_ability,
    lora_name: name,
  }));
}
