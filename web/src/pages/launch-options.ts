import { parseLoose, type Pair } from '../components/key-value-rows';
import type { ModelType } from '../model-types';

/** One usable parameter combination of `GET /v1/engines/<type>/<name>`; an unusable engine maps to its reason. */
export interface EngineChoice {
  model_format?: string;
  model_size_in_billions?: number | string | null;
  quantizations?: string[];
  /** Bytes per replica on CPU, by quantization (docs/on-demand.md); null where nothing gives the size. */
  memory_estimates?: Record<string, number | null>;
  /** The same for the first quantization, or the one figure of a model without quantizations. */
  memory_estimate?: number | null;
}
export type EngineTable = Record<string, EngineChoice[] | string> | null;

/** Everything the launch drawer asks for. */
export interface LaunchForm {
  engine: string;
  format: string;
  size: string;
  quantization: string;
  uid: string;
  replica: string;
  nGpu: string; // 'auto', 'cpu' or a number
  gpuIdx: string;
  requestLimits: string;
  modelPath: string;
  /** keep_alive: `5m`, `30s`, `0`, `-1`; empty for the server's default. */
  keepAlive: string;
  force: boolean;
  envs: Pair[];
  extra: Pair[];
}

export const emptyForm: LaunchForm = { engine: '', format: '', size: '', quantization: '', uid: '', replica: '1', nGpu: 'auto', gpuIdx: '', requestLimits: '', modelPath: '', keepAlive: '', force: false, envs: [], extra: [] };

/** The memory estimate of the chosen engine, format, size and quantization, for one replica; null when unknown. */
export function chosenEstimate(table: EngineTable, form: LaunchForm): number | null {
  const choices = table?.[form.engine];
  if (!Array.isArray(choices)) return null;
  const matches = (c: EngineChoice) => (!form.format || c.model_format === form.format) && (!form.size || sizeText(c.model_size_in_billions) === form.size);
  const choice = choices.find((c) => matches(c) && (c.quantizations ?? []).includes(form.quantization)) ?? choices.find(matches);
  if (!choice) return null;
  return choice.memory_estimates?.[form.quantization] ?? choice.memory_estimate ?? null;
}

const sizeText = (s: EngineChoice['model_size_in_billions']) => (s === null || s === undefined ? '' : String(s));

/** The cascade: engine → format → size → quantization, each from what the previous choice allows. */
export function cascade(table: EngineTable, form: LaunchForm) {
  const usable = Object.entries(table ?? {}).filter((e): e is [string, EngineChoice[]] => Array.isArray(e[1]));
  const unusable = Object.entries(table ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string');
  const choices = usable.find(([name]) => name === form.engine)?.[1] ?? [];
  const formats = [...new Set(choices.map((c) => c.model_format).filter((f): f is string => !!f))];
  const byFormat = choices.filter((c) => !form.format || c.model_format === form.format);
  const sizes = [...new Set(byFormat.map((c) => sizeText(c.model_size_in_billions)).filter(Boolean))];
  const bySize = byFormat.filter((c) => !form.size || sizeText(c.model_size_in_billions) === form.size);
  const quantizations = [...new Set(bySize.flatMap((c) => c.quantizations ?? []))];
  return { engines: usable.map(([name]) => name), unusable, formats, sizes, quantizations };
}

/** Picks the first option of each level that the current value is not one of. */
export function settle(table: EngineTable, form: LaunchForm): LaunchForm {
  let next = form;
  const fix = (key: 'engine' | 'format' | 'size' | 'quantization', options: string[]) => {
    if (!options.includes(next[key])) next = { ...next, [key]: options[0] ?? '' };
  };
  fix('engine', cascade(table, next).engines);
  fix('format', cascade(table, next).formats);
  fix('size', cascade(table, next).sizes);
  fix('quantization', cascade(table, next).quantizations);
  return next;
}

/** The body of `POST /v1/models` (contract §3.1); empty fields are left out for the server's defaults. */
export function launchBody(type: ModelType, name: string, form: LaunchForm): Record<string, unknown> {
  const body: Record<string, unknown> = { model_name: name, model_type: type };
  if (form.engine) body.model_engine = form.engine;
  if (form.format) body.model_format = form.format;
  if (form.size) body.model_size_in_billions = form.size;
  if (form.quantization) body.quantization = form.quantization;
  if (form.uid.trim()) body.model_uid = form.uid.trim();
  if (form.replica.trim()) body.replica = Number(form.replica);
  body.n_gpu = form.nGpu === 'cpu' ? null : form.nGpu === 'auto' ? 'auto' : Number(form.nGpu);
  if (form.gpuIdx.trim()) body.gpu_idx = form.gpuIdx.split(',').map((s) => Number(s.trim()));
  if (form.requestLimits.trim()) body.request_limits = Number(form.requestLimits);
  if (form.modelPath.trim()) body.model_path = form.modelPath.trim();
  const keepAlive = form.keepAlive.trim();
  if (keepAlive) body.keep_alive = /^-?\d+(\.\d+)?$/.test(keepAlive) ? Number(keepAlive) : keepAlive;
  if (form.force) body.force = true;
  const envs = form.envs.filter((p) => p.key.trim());
  if (envs.length > 0) body.envs = Object.fromEntries(envs.map((p) => [p.key.trim(), p.value]));
  for (const p of form.extra.filter((p) => p.key.trim())) body[p.key.trim()] = parseLoose(p.value);
  return body;
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/** The same launch as a `hangar launch` command line (issue 8's flags, Xinference's names). */
export function cliCommand(type: ModelType, name: string, form: LaunchForm, endpoint: string): string {
  const args = ['hangar', 'launch', '-e', endpoint, '-n', name, '-t', type];
  if (form.engine) args.push('--model-engine', form.engine);
  if (form.format) args.push('-f', form.format);
  if (form.size) args.push('-s', form.size);
  if (form.quantization) args.push('-q', form.quantization);
  if (form.uid.trim()) args.push('-u', form.uid.trim());
  if (form.replica.trim() && form.replica.trim() !== '1') args.push('-r', form.replica.trim());
  if (form.nGpu !== 'auto') args.push('--n-gpu', form.nGpu === 'cpu' ? 'none' : form.nGpu);
  if (form.gpuIdx.trim()) args.push('--gpu-idx', form.gpuIdx.replace(/\s/g, ''));
  if (form.modelPath.trim()) args.push('--model-path', form.modelPath.trim());
  if (form.requestLimits.trim()) args.push('--request-limits', form.requestLimits.trim());
  if (form.keepAlive.trim()) args.push('--keep-alive', form.keepAlive.trim());
  if (form.force) args.push('--force');
  for (const p of form.envs.filter((p) => p.key.trim())) args.push('--env', p.key.trim(), p.value);
  for (const p of form.extra.filter((p) => p.key.trim())) args.push(`--${p.key.trim().replaceAll('_', '-')}`, p.value);
  return args.map(quote).join(' ');
}
