import { HangarError } from '../../errors/hangar-error.js';
import { GgufHeaderError, MAX_GGUF_HEADER_BYTES, readGgufMetadata, type GgufScalar } from '../gguf-header.js';
import { contextLengthOf, sizeInBillions, stopsOf, templateInTokenizerConfig, textConfig } from '../config-facts.js';
import type { LlmRecord } from '../schemas/llm.js';
import { bitsPerWeight, ggufQuantizations, pickQuantization, type GgufQuantization, type RepoFile } from './gguf-files.js';
import type { HubClient, RepoInfo } from './hub-client.js';
import { architectureFacts, type ArchitectureFacts } from './remote-code.js';
import { registrationName, type HubId } from './hub-id.js';
import { templateAbilities } from './template-abilities.js';

type Json = Record<string, unknown>;

export type HubModelType = 'LLM' | 'embedding' | 'rerank';

export interface HubRegistrationInput {
  client: HubClient;
  id: HubId;
  modelType: HubModelType;
  /** The built-in LLM family that lists this repo, if one does: its parsers and stops fill what the repo does not say. */
  builtinFamily: (repo: string) => LlmRecord | undefined;
  signal?: AbortSignal;
  /** Told what the checkpoint's config says of the code that loads it (remote-code.ts), before anything is registered. */
  architecture?: (facts: ArchitectureFacts) => void;
}

const DTYPE_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, float64: 8, float8_e4m3fn: 1 };
const OTHER_WEIGHTS = /\.(bin|pt|pth)$/i;

/**
 * A custom registration built from a hub repository (docs/registry.md, "Launch by hub
 * id"): the files and sizes the hub lists; for a transformers checkpoint its
 * config.json (architecture, context length, vision), tokenizer_config.json and
 * generation_config.json (chat template, stop tokens); for GGUF files the
 * quantizations their names offer, with the template and context length read from
 * the GGUF's own metadata over HTTP ranges. Specs pin the commit read, so a launch
 * fetches those files and a download finished once serves offline.
 */
export async function buildHubRegistration(input: HubRegistrationInput): Promise<Json> {
  const { client, id } = input;
  const info = await client.repoInfo(id.repo);
  const ggufs = ggufQuantizations(info.files);
  const torch = torchWeights(info.files);
  if (ggufs.length === 0 && torch.length === 0) {
    throw new HangarError('hub_model_unusable', [id.repo, 'it has no safetensors, PyTorch or GGUF weight files'], { param: 'model_name' });
  }
  const config = torch.length > 0 ? await client.fileJson(info.repo, info.sha, 'config.json') : null;
  if (ggufs.length === 0 && !config) {
    // A LoRA adapter's weights come with its adapter_config.json: said as such, with how to serve it.
    const adapter = hasFile(info, 'adapter_config.json') ? await client.fileJson(info.repo, info.sha, 'adapter_config.json') : null;
    const base = typeof adapter?.base_model_name_or_path === 'string' ? adapter.base_model_name_or_path : null;
    const why = adapter
      ? `it is a LoRA adapter${base ? ` of ${base}` : ''}, not a model: launch ${base ?? 'its base model'} with the adapter in peft_model_config.lora_list (docs/registry.md)`
      : hasFile(info, 'config.json') ? 'its config.json does not read as a JSON object' : 'its weights come without a config.json';
    throw new HangarError('hub_model_unusable', [id.repo, why], { param: 'model_name' });
  }
  refuseOtherType(input, info);
  if (config) input.architecture?.(architectureFacts(config));
  // One file's header says what all say (template, context); the tag's file, else the default pick.
  const picked = ggufs.length > 0 ? pickQuantization(ggufs, id.tag, id.repo) : null;
  const gguf = picked ? await ggufFacts(client, info, picked, input.signal) : null;
  const specs = [...(config ? torchSpecs(info, torch, config) : []), ...(picked ? ggufSpecs(info, ggufs, gguf, picked) : [])];
  const name = registrationName(id);
  const language = cardLanguages(info.raw);
  const description = `${id.repo} from the hub at ${info.sha.slice(0, 12)}${config?.model_type ? ` (${String(config.model_type)})` : gguf?.architecture ? ` (${gguf.architecture})` : ''}`;
  if (input.modelType === 'embedding') {
    const dims = (config ? numberIn(textConfig(config), ['hidden_size', 'd_model', 'n_embd']) : null) ?? gguf?.embeddingLength ?? null;
    if (!dims) throw new HangarError('hub_model_unusable', [id.repo, 'its config gives no embedding size (hidden_size)'], { param: 'model_name' });
    return { version: 2, model_name: name, model_description: description, dimensions: dims, max_tokens: (config ? contextLengthOf(config) : null) ?? gguf?.contextLength ?? 512, language, model_specs: specs };
  }
  if (input.modelType === 'rerank') {
    return { version: 2, model_name: name, model_description: description, type: 'normal', max_tokens: (config ? contextLengthOf(config) : null) ?? 512, language, model_specs: specs.filter((s) => s.model_format === 'pytorch') };
  }
  return llmDefinition(input, info, config, gguf, specs, name, language, description);
}

async function llmDefinition(input: HubRegistrationInput, info: RepoInfo, config: Json | null, gguf: GgufFacts | null, specs: Json[], name: string, language: string[], description: string): Promise<Json> {
  const { client } = input;
  const family = input.builtinFamily(info.repo);
  let template = gguf?.template ?? null;
  let stops = { stop_token_ids: [] as number[], stop: [] as string[] };
  let contextLength = gguf?.contextLength ?? null;
  let vision = false;
  if (config) {
    const [tokenizerConfig, generationConfig] = await Promise.all([
      client.fileJson(info.repo, info.sha, 'tokenizer_config.json'),
      client.fileJson(info.repo, info.sha, 'generation_config.json'),
    ]);
    // transformers 5 writes the template beside the tokenizer config.
    template = templateInTokenizerConfig(tokenizerConfig ?? {}) ?? (hasFile(info, 'chat_template.jinja') ? await client.fileText(info.repo, info.sha, 'chat_template.jinja') : null) ?? template;
    stops = stopsOf(config, tokenizerConfig ?? {}, generationConfig ?? {});
    contextLength = contextLengthOf(config) ?? contextLength;
    vision = Boolean(config.vision_config) && (hasFile(info, 'preprocessor_config.json') || hasFile(info, 'processor_config.json'));
  }
  const found = templateAbilities(template);
  const toolParser = found.tool_parser ?? family?.tool_parser ?? null;
  const reasoning = found.reasoning ?? (family?.reasoning_start_tag ? { start: family.reasoning_start_tag, end: family.reasoning_end_tag ?? '' } : null);
  const abilities: string[] = template ? ['chat', 'generate'] : ['generate'];
  if (template && (found.tools || family?.model_ability.includes('tools'))) abilities.push('tools');
  // The engines read images per family (docs/vision.md): claimed where a built-in family with vision lists this repo.
  if (vision && family?.model_ability.includes('vision')) abilities.push('vision');
  // Harmony (gpt-oss) reasons on its analysis channel, without tags.
  if (template && (reasoning || toolParser === 'gpt-oss')) abilities.push('reasoning');
  if (found.hybrid) abilities.push('hybrid');
  return {
    version: 2,
    model_name: name,
    model_description: description,
    // A built-in family that lists the repo shares its parsers; else the architecture, a family of its own.
    model_family: family?.model_name ?? (config?.model_type ? String(config.model_type) : (gguf?.architecture ?? 'other')),
    model_lang: language,
    model_ability: abilities,
    context_length: contextLength ?? 2048,
    model_specs: specs,
    ...(template ? { chat_template: template, stop_token_ids: stops.stop_token_ids.length > 0 ? stops.stop_token_ids : (family?.stop_token_ids ?? []), stop: stops.stop.length > 0 ? stops.stop : (family?.stop ?? []) } : {}),
    ...(toolParser && template ? { tool_parser: toolParser } : {}),
    ...(reasoning && template ? { reasoning_start_tag: reasoning.start, reasoning_end_tag: reasoning.end } : {}),
  };
}

/** The transformers weights: safetensors (not a Mistral-style `consolidated` copy beside sharded ones), else .bin/.pt. */
function torchWeights(files: readonly RepoFile[]): RepoFile[] {
  const safetensors = files.filter((f) => f.path.endsWith('.safetensors') && !f.path.includes('/'));
  if (safetensors.length > 0) {
    const sharded = safetensors.filter((f) => !/^consolidated/.test(f.path));
    return sharded.length > 0 ? sharded : safetensors;
  }
  return files.filter((f) => OTHER_WEIGHTS.test(f.path) && !f.path.includes('/') && !/^(training_args|optimizer|scheduler|rng_state)/.test(f.path));
}

function torchSpecs(info: RepoInfo, weights: RepoFile[], config: Json): Json[] {
  const bytes = weights.reduce((sum, f) => sum + f.size, 0);
  const dtype = String(config.torch_dtype ?? config.dtype ?? textConfig(config).torch_dtype ?? 'bfloat16');
  const total = (info.raw.safetensors as Json | undefined)?.total;
  const parameters = typeof total === 'number' && total > 0 ? total : bytes / (DTYPE_BYTES[dtype] ?? 2);
  const quant = (config.quantization_config as Json | undefined) ?? {};
  const method = typeof quant.quant_method === 'string' ? quant.quant_method.toLowerCase() : null;
  // Pre-quantized checkpoints are their own formats in Xinference's catalog.
  const [format, quantization] =
    method === 'awq' ? ['awq', `Int${Number(quant.bits ?? 4)}`] : method === 'gptq' ? ['gptq', `Int${Number(quant.bits ?? 4)}`] : method === 'fp8' ? ['fp8', 'FP8'] : ['pytorch', 'none'];
  return [{ model_format: format, model_size_in_billions: sizeInBillions(parameters), quantization, model_id: info.repo, model_hub: 'huggingface', model_revision: info.sha }];
}

function ggufSpecs(info: RepoInfo, offered: GgufQuantization[], facts: GgufFacts | null, picked: GgufQuantization): Json[] {
  // One size for every quantization (launches pick a spec by size): the metadata's label, else the picked file's bytes.
  const size = sizeInBillions(facts?.parameters ?? (picked.bytes * 8) / bitsPerWeight(picked.quantization));
  return offered.map((q) => ({
    model_format: 'ggufv2',
    model_size_in_billions: size,
    quantization: q.quantization,
    model_id: info.repo,
    model_hub: 'huggingface',
    model_revision: info.sha,
    model_file_name_template: q.files[0],
    ...(q.split ? { model_file_name_split_template: q.split.template, quantization_parts: { [q.quantization]: q.split.parts } } : {}),
  }));
}

interface GgufFacts {
  architecture: string | null;
  template: string | null;
  contextLength: number | null;
  embeddingLength: number | null;
  /** From `general.size_label` (`7B`, `0.5B`, `8x7B`, `135M`). */
  parameters: number | null;
}

/** A GGUF header from the hub may take this long to read (a cut or trickling hub fails the launch, not holds it). */
const GGUF_HEADER_TIMEOUT_MS = 30_000;

/** The GGUF's metadata, read from the start of the file on the hub, within the header's byte and time limits. */
async function ggufFacts(client: HubClient, info: RepoInfo, quantization: GgufQuantization, signal?: AbortSignal): Promise<GgufFacts> {
  const file = quantization.files[0]!;
  const timeout = AbortSignal.timeout(GGUF_HEADER_TIMEOUT_MS);
  const limit = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let meta: Map<string, GgufScalar>;
  try {
    const source = await client.fileStart(info.repo, info.sha, file, MAX_GGUF_HEADER_BYTES, limit);
    try {
      meta = await readGgufMetadata(source);
    } finally {
      source.close();
    }
  } catch (err) {
    throw ggufReadFailure(err, client, info, file, signal);
  }
  const text = (key: string): string | null => (typeof meta.get(key) === 'string' ? (meta.get(key) as string) : null);
  const arch = text('general.architecture');
  const count = (key: string): number | null => {
    const value = meta.get(`${arch}.${key}`);
    return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
  };
  return {
    architecture: arch,
    template: text('tokenizer.chat_template'),
    contextLength: arch ? count('context_length') : null,
    embeddingLength: arch ? count('embedding_length') : null,
    parameters: sizeLabel(meta.get('general.size_label')),
  };
}

/**
 * Why the header could not be read. Only a file that arrived and does not parse is the
 * repository's fault (400); a connection that failed, was cut or took too long is the
 * hub out of reach (503, worth a retry), and an HTTP error the hub's (502).
 */
function ggufReadFailure(err: unknown, client: HubClient, info: RepoInfo, file: string, signal?: AbortSignal): unknown {
  if (signal?.aborted || err instanceof HangarError) return err;
  const failure = err as Error & { cause?: { code?: string; message?: string } };
  if (err instanceof GgufHeaderError) {
    return new HangarError('hub_model_unusable', [info.repo, `${file} does not read as GGUF: ${failure.message}`], { param: 'model_name', cause: err });
  }
  const why = failure.name === 'TimeoutError' ? `its header not read within ${GGUF_HEADER_TIMEOUT_MS / 1000} s` : (failure.cause?.code ?? failure.cause?.message ?? failure.message);
  return new HangarError('hub_unreachable', [client.endpoint, `${why} (reading the GGUF header of ${file}; set HF_ENDPOINT for a mirror)`], { cause: err });
}

function sizeLabel(label: unknown): number | null {
  if (typeof label !== 'string') return null;
  const m = /^(?:(\d+)x)?(\d+(?:\.\d+)?)([KMBT])$/i.exec(label.trim());
  if (!m) return null;
  const scale = { K: 1e3, M: 1e6, B: 1e9, T: 1e12 }[m[3]!.toUpperCase() as 'K' | 'M' | 'B' | 'T'];
  return Number(m[1] ?? 1) * Number(m[2]) * scale;
}

function numberIn(json: Json, keys: string[]): number | null {
  for (const key of keys) if (typeof json[key] === 'number' && Number.isInteger(json[key]) && (json[key] as number) > 0) return json[key] as number;
  return null;
}

/**
 * A sentence-transformers repository (its `modules.json`, or the hub's
 * sentence-similarity / feature-extraction tag) launched as an LLM was started as one,
 * its missing head initialised at random, and wrote garbage: refused, naming the type.
 */
function refuseOtherType(input: HubRegistrationInput, info: RepoInfo): void {
  if (input.modelType !== 'LLM') return;
  const tag = info.raw.pipeline_tag;
  if (hasFile(info, 'modules.json') || tag === 'sentence-similarity' || tag === 'feature-extraction') {
    throw new HangarError('invalid_field', [`model_type: ${input.id.repo} is an embedding model (${hasFile(info, 'modules.json') ? "sentence-transformers' modules.json" : `the hub's ${String(tag)} tag`}); launch it with "model_type": "embedding"`], { param: 'model_type' });
  }
  if (tag === 'text-ranking') {
    throw new HangarError('invalid_field', [`model_type: ${input.id.repo} is a reranker (the hub's text-ranking tag); launch it with "model_type": "rerank"`], { param: 'model_type' });
  }
}

function hasFile(info: RepoInfo, name: string): boolean {
  return info.files.some((f) => f.path === name);
}

/** The model card's `language` list, where it has one; English otherwise (Xinference's registrations need one). */
function cardLanguages(raw: Json): string[] {
  const card = (raw.cardData ?? {}) as Json;
  const langs = [card.language].flat().filter((l): l is string => typeof l === 'string' && l.length > 0 && l.length < 20);
  return langs.length > 0 ? langs.slice(0, 20) : ['en'];
}
