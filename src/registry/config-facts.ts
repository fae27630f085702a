/**
 * What a transformers checkpoint's JSON files say about serving it, read the same way
 * from a local folder (auto-registration.ts) and from the hub (hub/hub-registration.ts).
 */
type Json = Record<string, unknown>;

/** The text model's config: a vision-language model keeps it under `text_config`. */
export function textConfig(config: Json): Json {
  return (config.text_config as Json | undefined) ?? config;
}

export function contextLengthOf(config: Json): number | null {
  const text = textConfig(config);
  for (const key of ['max_position_embeddings', 'n_positions', 'seq_length', 'max_sequence_length']) {
    if (typeof text[key] === 'number' && Number.isInteger(text[key]) && (text[key] as number) > 0) return text[key] as number;
  }
  return null;
}

/** tokenizer_config.json's `chat_template`: a string, or a list of named ones (the `default` one). */
export function templateInTokenizerConfig(tokenizerConfig: Json): string | null {
  const inConfig = tokenizerConfig.chat_template;
  if (typeof inConfig === 'string') return inConfig;
  if (Array.isArray(inConfig)) {
    const named = inConfig as Array<{ name?: string; template?: string }>;
    return (named.find((t) => t.name === 'default') ?? named[0])?.template ?? null;
  }
  return null;
}

/** Stop token ids from generation_config.json and config.json, and the EOS token's text from tokenizer_config.json. */
export function stopsOf(config: Json, tokenizerConfig: Json, generationConfig: Json): { stop_token_ids: number[]; stop: string[] } {
  const ids = [generationConfig.eos_token_id, config.eos_token_id].flat().filter((v): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0);
  const eos = tokenizerConfig.eos_token;
  const text = typeof eos === 'string' ? eos : typeof (eos as Json | undefined)?.content === 'string' ? ((eos as Json).content as string) : null;
  return { stop_token_ids: [...new Set(ids)], stop: text ? [text] : [] };
}

/** A size in billions as the catalog writes it: a number when whole, else `"0_5"` (two decimals, at least 0.01). */
export function sizeInBillions(parameters: number): number | string {
  const billions = Math.max(0.01, Math.round((parameters / 1e9) * 100) / 100);
  return Number.isInteger(billions) ? billions : String(billions).replace('.', '_');
}
