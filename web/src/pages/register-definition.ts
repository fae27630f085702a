import type { ModelType } from '../model-types';

/**
 * The register form's fields per model type, and the translation between the form
 * and a registration definition (Xinference's custom model shapes, notes §8.3). The
 * server does the validation; its message names the field at fault.
 */
export interface SpecRow {
  model_format: string;
  model_size_in_billions: string;
  quantization: string;
  model_uri: string;
}

export interface RegisterForm {
  model_name: string;
  model_description: string;
  languages: string;
  abilities: string[];
  model_family: string;
  /** LLM: a Jinja chat template, needed for a chat model of a family that is not built in; empty: the family's. */
  chat_template: string;
  context_length: string;
  dimensions: string;
  max_tokens: string;
  rerank_type: string;
  model_uri: string;
  model_id: string;
  launcher: string;
  launcher_args: string;
  specs: SpecRow[];
}

export const ABILITIES: Partial<Record<ModelType, string[]>> = {
  LLM: ['generate', 'chat', 'tools', 'vision', 'audio', 'omni', 'reasoning', 'hybrid', 'embed'],
  image: ['text2image', 'image2image', 'inpainting', 'ocr'],
  audio: ['audio2text', 'text2audio', 'text2audio_zero_shot', 'text2audio_voice_cloning', 'text2audio_emotion_control'],
  video: ['text2video', 'image2video', 'firstlastframe2video'],
};

export const emptySpec: SpecRow = { model_format: 'pytorch', model_size_in_billions: '', quantization: 'none', model_uri: '' };

export function emptyForm(type: ModelType): RegisterForm {
  return {
    model_name: '',
    model_description: '',
    languages: 'en',
    abilities: type === 'LLM' ? ['chat', 'generate'] : [],
    model_family: '',
    chat_template: '',
    context_length: '2048',
    dimensions: '',
    max_tokens: '512',
    rerank_type: 'normal',
    model_uri: '',
    model_id: '',
    launcher: 'python',
    launcher_args: '{}',
    specs: [{ ...emptySpec }],
  };
}

const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
/** A number where it parses, else the text as typed, so the server names the bad field. */
const num = (s: string): number | string => (s.trim() !== '' && Number.isFinite(Number(s)) ? Number(s) : s.trim());
const orNull = (s: string) => (s.trim() ? s.trim() : null);

export function toDefinition(type: ModelType, f: RegisterForm): Record<string, unknown> {
  const spec = (s: SpecRow) => ({ model_format: s.model_format.trim() || 'pytorch', quantization: s.quantization.trim() || 'none', model_uri: orNull(s.model_uri) });
  switch (type) {
    case 'LLM':
      return {
        version: 2,
        model_name: f.model_name.trim(),
        model_description: orNull(f.model_description),
        model_lang: list(f.languages),
        model_ability: f.abilities,
        model_family: f.model_family.trim(),
        // Cleared on purpose: null, so an edit drops the stored one (the family's serves).
        chat_template: f.chat_template.trim() ? f.chat_template : null,
        context_length: num(f.context_length),
        model_specs: f.specs.map((s) => ({ ...spec(s), model_size_in_billions: /_/.test(s.model_size_in_billions) ? s.model_size_in_billions.trim() : num(s.model_size_in_billions) })),
      };
    case 'embedding':
      return { version: 2, model_name: f.model_name.trim(), dimensions: num(f.dimensions), max_tokens: num(f.max_tokens), language: list(f.languages), model_specs: f.specs.map(spec) };
    case 'rerank':
      return { version: 2, model_name: f.model_name.trim(), type: f.rerank_type.trim() || 'normal', language: list(f.languages), max_tokens: f.max_tokens.trim() ? num(f.max_tokens) : null, model_specs: f.specs.map(spec) };
    case 'image':
    case 'audio':
    case 'video':
      return { version: 2, model_name: f.model_name.trim(), model_family: f.model_family.trim(), model_ability: f.abilities, model_uri: orNull(f.model_uri), model_id: orNull(f.model_id) };
    case 'flexible':
      return { model_name: f.model_name.trim(), model_description: orNull(f.model_description), model_uri: f.model_uri.trim(), launcher: f.launcher.trim(), launcher_args: f.launcher_args.trim() || '{}' };
  }
}

const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** A registration as `GET /v1/model_registrations/<type>/<name>` gives it, back into the form (for editing). */
export function fromDefinition(type: ModelType, d: Record<string, any>): RegisterForm {
  const specs = Array.isArray(d.model_specs) && d.model_specs.length > 0 ? (d.model_specs as Array<Record<string, unknown>>) : [{}];
  return {
    ...emptyForm(type),
    model_name: str(d.model_name),
    model_description: str(d.model_description),
    languages: ((d.model_lang ?? d.language ?? []) as string[]).join(', '),
    abilities: (d.model_ability ?? []) as string[],
    model_family: str(d.model_family),
    chat_template: str(d.chat_template),
    context_length: str(d.context_length),
    dimensions: str(d.dimensions),
    max_tokens: str(d.max_tokens),
    rerank_type: str(d.type) || 'normal',
    model_uri: str(d.model_uri),
    model_id: str(d.model_id),
    launcher: str(d.launcher),
    launcher_args: typeof d.launcher_args === 'string' ? d.launcher_args : JSON.stringify(d.launcher_args ?? {}),
    specs: specs.map((s) => ({ model_format: str(s.model_format) || 'pytorch', model_size_in_billions: str(s.model_size_in_billions), quantization: str(s.quantization) || 'none', model_uri: str(s.model_uri) })),
  };
}

/** Keys a detailed listing adds; not the user's. */
const LISTING_KEYS = ['is_builtin', 'cache_status', 'download_hubs'];

/**
 * An edit of a stored registration: the form's fields over the stored definition, so
 * what the form does not show (stop words and ids, reasoning tags, a
 * spec's model_id or GGUF file templates, virtualenv...) is kept; an edit that saved
 * the form alone replaced them with the family's, or failed on a hub spec's model_uri.
 * A spec row takes what is hidden from the stored spec of the same format and
 * quantization (rows may be removed or reordered), not from the one at its position.
 * A media model pointed at another hub id drops the old one's pinned revision.
 */
export function editedDefinition(type: ModelType, form: RegisterForm, original: Record<string, unknown>): Record<string, unknown> {
  const edited = toDefinition(type, form);
  const base: Record<string, unknown> = { ...original };
  for (const key of LISTING_KEYS) delete base[key];
  const merged: Record<string, unknown> = { ...base, ...edited };
  if (type === 'image' || type === 'audio' || type === 'video') {
    // Their stored specs are the listing's, not the user's: one flat model.
    delete merged.model_specs;
    if (edited.model_id !== original.model_id) merged.model_revision = null;
    return merged;
  }
  const specs = edited.model_specs;
  const stored = Array.isArray(original.model_specs) ? (original.model_specs as Array<Record<string, unknown>>) : [];
  if (Array.isArray(specs)) {
    merged.model_specs = (specs as Array<Record<string, unknown>>).map((spec) => {
      const same = stored.find((s) => s.model_format === spec.model_format && s.quantization === spec.quantization);
      const { cache_status: _cached, ...kept } = same ?? {};
      // A spec the form left without a path keeps the stored one's hub id (and so stays a hub spec).
      return { ...kept, ...Object.fromEntries(Object.entries(spec).filter(([key, value]) => !(key === 'model_uri' && value === null && kept.model_id))) };
    });
  }
  return merged;
}
