import { HangarError } from '../../errors/hangar-error.js';

/** A file of a repo as the hub lists it. */
export interface RepoFile {
  path: string;
  size: number;
}

/** One quantization a GGUF repo offers: one file, or all parts of a split one. */
export interface GgufQuantization {
  /** As the file name spells it (`Q4_K_M`, `q8_0`, `IQ4_XS`, `BF16`); the file's name where none is found in it. */
  quantization: string;
  /** Paths in the repo, the first part first. */
  files: string[];
  bytes: number;
  /** For a split model: the template and parts as Xinference's specs write them. */
  split: { template: string; parts: string[] } | null;
  /** Other files whose names carry the same quantization (`Model-Q4_K_M.gguf` and `Model-Instruct-Q4_K_M.gguf`): a tag is ambiguous. */
  sameName?: string[];
}

const SPLIT = /-(\d{5})-of-(\d{5})\.gguf$/i;
// ggml's quantization type names as quantizers put them in file names (llama.cpp's
// `llama-quantize --help`): Q4_K_M, Q8_0, IQ4_XS, TQ1_0, BF16, F16, MXFP4, ...
// Unsloth's dynamic quantizations keep their `UD-` (`Model-UD-Q4_K_XL.gguf`, tag `:UD-Q4_K_XL`).
const QUANT = /(?:^|[-_.])((?:UD[-_])?(?:I?Q\d(?:_[A-Z0-9]+)*|TQ\d_\d)|MXFP4(?:_MOE)?|BF16|F16|F32|FP16|FP32)(?=$|[-_.])/gi;
/** Files beside the model that are not the model: a vision projector, an imatrix. */
const NOT_A_MODEL = /mmproj|imatrix/i;

/**
 * The quantizations a GGUF repo offers, in the hub's file order: each file's
 * quantization read from its name; the parts of a split file (`-00001-of-00003`) are
 * one quantization. Projector and imatrix files are not models and are left out.
 */
export function ggufQuantizations(files: readonly RepoFile[]): GgufQuantization[] {
  const found = new Map<string, GgufQuantization>();
  for (const file of files) {
    if (!file.path.toLowerCase().endsWith('.gguf') || NOT_A_MODEL.test(file.path)) continue;
    // A listing's paths become cache paths: one that would leave the repo's folder is not a model of it.
    if (file.path.startsWith('/') || file.path.split('/').some((part) => part === '..' || part === '')) continue;
    const split = SPLIT.exec(file.path);
    const stem = split ? file.path.slice(0, split.index) : file.path.slice(0, -'.gguf'.length);
    const base = stem.slice(stem.lastIndexOf('/') + 1);
    // A quantization folder (`Q4_K_M/model-00001-of-00002.gguf`) names it when the file does not.
    const names = [...base.matchAll(QUANT)].map((m) => m[1]!);
    const folderNames = names.length === 0 ? [...stem.matchAll(QUANT)].map((m) => m[1]!) : names;
    let quantization = folderNames.at(-1) ?? base;
    // A further part of a split file joins its first, whatever else shares its quantization's name.
    const sameSplit = split ? [...found.values()].find((q) => q.split?.template === `${stem}-{part}.gguf`) : undefined;
    if (sameSplit && split) {
      sameSplit.files.push(file.path);
      sameSplit.split!.parts.push(`${split[1]}-of-${split[2]}`);
      sameSplit.bytes += file.size;
      continue;
    }
    const known = found.get(quantization.toLowerCase());
    // Two different files with the same quantization in their names: the later one is
    // named by its file, and a tag of that quantization is ambiguous (said at launch).
    if (known) {
      known.sameName = [...(known.sameName ?? []), file.path];
      quantization = base;
    }
    found.set(quantization.toLowerCase(), {
      quantization,
      files: [file.path],
      bytes: file.size,
      split: split ? { template: `${stem}-{part}.gguf`, parts: [`${split[1]}-of-${split[2]}`] } : null,
    });
  }
  for (const q of found.values()) {
    if (!q.split) continue;
    const order = q.files.map((f, i) => ({ f, p: q.split!.parts[i]! })).sort((a, b) => a.p.localeCompare(b.p));
    q.files = order.map((o) => o.f);
    q.split.parts = order.map((o) => o.p);
  }
  return [...found.values()];
}

/**
 * The quantization a launch gets: the tag's (its name, case-insensitive, or one of its
 * files' names); without a tag, Q4_K_M, else the first Q4, else the first file, as
 * Ollama and llama.cpp's `-hf` pick.
 */
export function pickQuantization(offered: readonly GgufQuantization[], tag: string | null, repo: string): GgufQuantization {
  if (offered.length === 0) throw new HangarError('invalid_field', [`model_name: ${repo} has no GGUF file`], { param: 'model_name' });
  // Ollama's `:latest` is its default tag: no tag.
  if (tag !== null && tag.toLowerCase() !== 'latest') {
    const t = tag.toLowerCase();
    // A file's own name says which file: never ambiguous.
    const byFile = offered.find((q) => q.files.some((f) => f.toLowerCase() === t || f.toLowerCase().endsWith(`/${t}`)));
    if (byFile) return byFile;
    const hit =
      offered.find((q) => q.quantization.toLowerCase() === t) ??
      // `:Q4_K_XL` for unsloth's `UD-Q4_K_XL`.
      offered.find((q) => q.quantization.toLowerCase().replace(/^ud[-_]/, '') === t);
    if (hit) return unambiguous(hit, repo);
    throw new HangarError('hub_quantization_not_found', [repo, tag, offered.map((q) => q.quantization).join(', ')], { param: 'model_name' });
  }
  return unambiguous(defaultQuantization(offered), repo);
}

/**
 * Without a tag, as Ollama and llama.cpp's `-hf` pick: Q4_K_M, else another 4-bit one
 * (not the ARM repacks `Q4_0_4_4`, `Q4_0_4_8`, `Q4_0_8_8`, which llama.cpp has dropped),
 * else Q5_K_M, Q8_0, else the smallest file: the first by name was BF16 or F16, the
 * largest there is.
 */
function defaultQuantization(offered: readonly GgufQuantization[]): GgufQuantization {
  const name = (q: GgufQuantization) => q.quantization.toLowerCase().replace(/^ud[-_]/, '');
  const fourBit = (q: GgufQuantization) => /^i?q4/.test(name(q)) && !/^q4_0_\d_\d$/.test(name(q));
  return (
    offered.find((q) => name(q) === 'q4_k_m') ??
    offered.find(fourBit) ??
    offered.find((q) => name(q) === 'q5_k_m') ??
    offered.find((q) => name(q) === 'q8_0') ??
    [...offered].sort((a, b) => a.bytes - b.bytes)[0]!
  );
}

/** A quantization whose name another file carries too: which is meant is the caller's to say, by the file's name. */
function unambiguous(hit: GgufQuantization, repo: string): GgufQuantization {
  if (!hit.sameName || hit.sameName.length === 0) return hit;
  const files = [hit.files[0]!, ...hit.sameName];
  throw new HangarError('invalid_field', [`model_name: ${repo} has ${files.length} files of ${hit.quantization} (${files.join(', ')}); name the one to launch after the colon, e.g. ${repo}:${files[1]!.split('/').pop()}`], { param: 'model_name' });
}

/** Bits per weight of a quantization, roughly (llama.cpp's table), for a parameter count from a file's size. */
export function bitsPerWeight(quantization: string): number {
  const q = quantization.toLowerCase();
  if (q === 'f32' || q === 'fp32') return 32;
  if (q === 'f16' || q === 'bf16' || q === 'fp16') return 16;
  if (q.startsWith('mxfp4')) return 4.25;
  const digit = /q(\d)/.exec(q)?.[1];
  if (!digit) return 8.5;
  const bits = Number(digit);
  return bits === 8 ? 8.5 : bits + 0.5;
}
