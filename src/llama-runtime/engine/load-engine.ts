import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { InvalidInput } from '../invalid-input.js';
import { cpuThreadsFor } from './cpu-threads.js';
import { EmbeddingEngine } from './embedding-engine.js';
import type { Engine } from './engine.js';
import { ExitCode } from '../exit-codes.js';
import { chooseEngine } from './llama-server-binary.js';
import { LlamaServerProcess } from './llama-server-process.js';
import { contextCap, LlmEngine } from './llm-engine.js';
import { parseLoadSpec } from './load-spec.js';
import { DOWNLOAD_SHARE, ggufFile, type Progress } from './model-file.js';
import type { ReadGate } from './server-stream.js';

export interface EngineLog {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * Loads the LOAD's model: finds (or downloads) the GGUF file, picks llama.cpp's
 * prebuilt binding (CUDA when the replica was given GPUs, the CPU one otherwise;
 * never a build), sizes its threads, and loads the weights with progress. `pace`
 * holds llama-server's streams between the relay's steps (relay-pace.ts).
 */
export async function loadEngine(raw: Record<string, unknown>, progress: Progress, log: EngineLog, pace: ReadGate | null = null, socketPath: string | null = null): Promise<Engine> {
  const spec = parseLoadSpec(raw);
  const file = await ggufFile(spec.location, progress);
  const gpu = (process.env.CUDA_VISIBLE_DEVICES ?? '').trim() !== '';
  const llama = await bindingFor(gpu, log);
  // llama-server holds the weights of an LLM; this process then needs the vocabulary only.
  const choice = spec.modelType === 'embedding' ? null : chooseEngine(process.env, gpu);
  const serverBinary = choice?.binary ?? null;
  const threads = cpuThreadsFor({ nThreads: spec.options.nThreads, replicas: spec.replicas, gpu, inProcess: serverBinary === null }, process.env, undefined, log.warn);
  log.info(`llama.cpp ${llama.gpu === false ? 'on the CPU' : `on ${llama.gpu}`}, computing with ${threads ?? 'the default number of'} thread(s)`);
  progress(DOWNLOAD_SHARE, 'load', `Loading ${file}`);
  let model;
  lastLoadError = null;
  try {
    model = await llama.loadModel({
      modelPath: file,
      vocabOnly: serverBinary !== null,
      gpuLayers: gpu ? (spec.options.nGpuLayers === null || spec.options.nGpuLayers < 0 ? 'max' : spec.options.nGpuLayers) : 0,
      onLoadProgress: (loaded) => progress(DOWNLOAD_SHARE + (1 - DOWNLOAD_SHARE) * 0.9 * loaded, 'load', `Loading ${file}: ${Math.round(loaded * 100)}%`),
    });
  } catch (err) {
    await new Promise((resolve) => setImmediate(resolve)); // llama.cpp's log lines reach the logger through the event loop
    // A file llama.cpp cannot read (not GGUF, truncated, an unknown architecture) is the model's fault.
    // Its parser quotes a wrong magic's bytes: the start of whatever file model_path named (say /etc/passwd), which is not the caller's to read.
    // A header whose counts or sizes are nonsense failed deep in the GGUF reader with
    // JavaScript's own words (`Cannot read properties of undefined`, `"size" is out of range`).
    // node-llama-cpp says only "Failed to load model"; llama.cpp logged why just before
    // (a truncated download: "tensor '…' data is not within the file bounds").
    const reason = err instanceof TypeError || err instanceof RangeError
      ? 'its GGUF header cannot be read (damaged, or counts and sizes no file has)'
      : /^Failed to load model\b/.test((err as Error).message) && lastLoadError !== null
        ? lastLoadError + (/not within the file bounds|incomplete/.test(lastLoadError) ? ' (a download cut short? remove the file, from the cache if it came from there, and launch again)' : '')
        : (err as Error).message.replace(/Invalid GGUF magic\..*$/s, 'it is not a GGUF file (it does not start with "GGUF")');
    throw new InvalidInput(`llama.cpp cannot load ${file}: ${reason}`);
  }
  checkTrainedContext(model.fileInfo.architectureMetadata as { context_length?: unknown } | undefined, file);
  if (serverBinary !== null) {
    const gpuLayers = gpu ? (spec.options.nGpuLayers === null || spec.options.nGpuLayers < 0 ? 999 : spec.options.nGpuLayers) : 0;
    const contextPerSlot = contextCap(model, spec);
    log.info(`llama.cpp's server holds the weights (${serverBinary})`);
    const server = await LlamaServerProcess.start({ binary: serverBinary, file, threads, parallel: spec.options.nParallel, contextPerSlot, gpuLayers, pace, log: (line) => log.warn(line), socketPath });
    server.onExit((why) => {
      // The engine process is gone: so is this replica. The control plane restarts it.
      log.warn(`${why}; the runtime exits`);
      process.exit(ExitCode.WORK_LOOP_DIED);
    });
    progress(1, 'load', `Loaded ${file}`);
    return LlmEngine.onServer(llama, model, spec, server);
  }
  if (choice) log.info(`node-llama-cpp holds the weights: ${choice.why}`);
  if (gpu) log.info(`${model.gpuLayers} of ${model.fileInsights.totalLayers} layers offloaded to the GPU`);
  const engine = spec.modelType === 'embedding' ? await EmbeddingEngine.create(model, spec, threads) : await LlmEngine.create(llama, model, spec, threads);
  progress(1, 'load', `Loaded ${file}`);
  return engine;
}

/**
 * llama.cpp reads a GGUF's trained context as a signed 32-bit count: 0xFFFFFFFF loaded,
 * then llama-server failed every call on an assertion (a context of -1 tokens) and the
 * replica restarted, again and again; 0 failed the load as a server error. Either is
 * the file's fault: refused at load, naming it.
 */
export function checkTrainedContext(metadata: { context_length?: unknown } | undefined, file: string): void {
  const trained = metadata?.context_length;
  if (trained === undefined) return;
  if (typeof trained !== 'number' || !Number.isInteger(trained) || trained < 1 || trained > 2 ** 31 - 1) {
    throw new InvalidInput(`llama.cpp cannot serve ${file}: its context_length (${String(trained)}) is not a context size (1 to ${2 ** 31 - 1} tokens)`);
  }
}

/** llama.cpp's own words for the last load that failed ("error loading model: …"), for the error (loadEngine). */
let lastLoadError: string | null = null;

async function bindingFor(gpu: boolean, log: EngineLog): Promise<Llama> {
  const logger = (level: LlamaLogLevel, message: string) => {
    const line = message.trimEnd();
    if (!line) return;
    const loadError = /error loading model: (.+)$/.exec(line);
    if (loadError) lastLoadError = loadError[1]!.slice(0, 300);
    if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal || level === LlamaLogLevel.warn) log.warn(`llama.cpp: ${line}`);
  };
  try {
    return await getLlama({ gpu: gpu ? 'cuda' : false, build: 'never', logLevel: LlamaLogLevel.warn, logger });
  } catch (err) {
    const what = gpu ? 'the CUDA build of llama.cpp (@node-llama-cpp/linux-x64-cuda)' : 'the CPU build of llama.cpp (@node-llama-cpp/linux-x64)';
    throw new Error(`Cannot load ${what}: ${(err as Error).message}. Run \`npm ci\` on this host; the prebuilt binaries come with node-llama-cpp.`);
  }
}
