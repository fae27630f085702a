/** The variables that carry a Hugging Face token (huggingface_hub reads both). */
const TOKEN_VARIABLES = ['HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN'] as const;

/**
 * The hub variables a launch's process gets over the service's own: a launch that names
 * its own `HF_ENDPOINT` (an allowed launch variable, docs/auth.md) gets only the token it
 * brings, never the service's, which would otherwise go with every request to a hub
 * the caller chose. Values are undefined to unset what the process would inherit.
 */
export function hubTokenOverrides(envs: Record<string, string>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (envs.HF_ENDPOINT !== undefined) for (const key of TOKEN_VARIABLES) out[key] = envs[key];
  // The same for ModelScope: its token goes only to the ModelScope the service names.
  if (envs.MODELSCOPE_ENDPOINT !== undefined || envs.HANGAR_MODELSCOPE_ENDPOINT !== undefined) out.MODELSCOPE_API_TOKEN = envs.MODELSCOPE_API_TOKEN;
  return out;
}
