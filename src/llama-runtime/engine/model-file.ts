import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mkdir, open as fsOpen, readFile, readdir, rename, rm, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { InvalidInput, SourceUnreachable } from '../invalid-input.js';
import { causeOf, type Hub, openHubFile, RETRIES, retryWaitMs, TRANSIENT } from './hub-request.js';

/** The share of a launch's progress that downloading takes; loading the weights is the rest. */
export const DOWNLOAD_SHARE = 0.8;
const LOOKUP_TIMEOUT_MS = 5_000;
const REPORT_EVERY_MS = 500;
const LOCAL_HINT = 'Download the file on a machine that can reach the hub and launch with model_path pointing at the .gguf file.';

export type Progress = (progress: number, stage: 'download' | 'load', message: string) => void;

/** The load spec fields that say where a GGUF model is (docs/runtime-protocol.md, "llama_cpp"). */
export interface GgufLocation {
  model_uri?: unknown;
  model_id?: unknown;
  model_hub?: unknown;
  model_revision?: unknown;
  quantization?: unknown;
  model_file_name_template?: unknown;
  model_file_name_split_template?: unknown;
  quantization_parts?: unknown;
  cache_dir?: unknown;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * The .gguf file to load, Xinference's way: a `model_uri` (or a launch's
 * `model_path`) that is a file is that file; a folder of GGUF files gives the one
 * the spec's `model_file_name_template` names for the launch's `quantization` (or
 * the first of its split parts), else the only one, else the one whose name holds
 * the quantization. Without a local path, only that file (or its parts) is fetched
 * from the hub into the cache, with progress. llama.cpp finds the other parts of a
 * split model next to the first.
 */
export async function ggufFile(spec: GgufLocation, progress: Progress, lookupTimeoutMs = LOOKUP_TIMEOUT_MS): Promise<string> {
  const uri = text(spec.model_uri);
  if (uri) return localFile(uri.startsWith('file://') ? fileURLToPath(uri) : uri, spec);
  const modelId = text(spec.model_id);
  if (!modelId) throw new InvalidInput('The load spec has neither model_uri nor model_id');
  const files = wantedFiles(spec);
  // Names from a registration or a hub's listing become paths in the cache: none may leave it.
  const outside = [modelId, ...files].find((name) => path.isAbsolute(name) || name.split(/[\\/]/).some((part) => part === '..' || part === ''));
  if (outside !== undefined) throw new InvalidInput(`${JSON.stringify(outside)} is not a path inside the model's repository`);
  // The revision names the snapshot's folder: the registration's rule (schemas/common.ts), checked again here.
  const revision = text(spec.model_revision);
  if (revision !== null && (!/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)*$/.test(revision) || revision.includes('..'))) {
    throw new InvalidInput(`${JSON.stringify(revision)} is not a branch, tag or commit of a hub repository`);
  }
  if (files.length === 0) {
    throw new InvalidInput(`${modelId} names no GGUF file for quantization ${String(spec.quantization)}: the spec needs model_file_name_template. ${LOCAL_HINT}`);
  }
  return download(hubOf(spec), modelId, files, progress, lookupTimeoutMs);
}

/** The file names of the spec's quantization: its split parts, or the one file. */
function wantedFiles(spec: GgufLocation): string[] {
  const quantization = text(spec.quantization) ?? '';
  const parts = (spec.quantization_parts as Record<string, unknown> | undefined)?.[quantization];
  const split = text(spec.model_file_name_split_template);
  if (split && Array.isArray(parts) && parts.length > 0) {
    return parts.map((part) => split.replaceAll('{quantization}', quantization).replaceAll('{part}', String(part)));
  }
  const template = text(spec.model_file_name_template);
  return template ? [template.replaceAll('{quantization}', quantization)] : [];
}

async function localFile(target: string, spec: GgufLocation): Promise<string> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new InvalidInput(`Model file or folder does not exist: ${target}`);
  if (info.isFile()) return target;
  // A pipe, socket or device would block the load on its first read, or never end.
  if (!info.isDirectory()) throw new InvalidInput(`Model path ${target} is neither a file nor a folder`);
  const names = (await readdir(target)).filter((n) => n.toLowerCase().endsWith('.gguf')).sort();
  if (names.length === 0) throw new InvalidInput(`Model folder ${target} holds no .gguf file`);
  const wanted = wantedFiles(spec).find((name) => names.includes(name));
  if (wanted) return regularFile(path.join(target, wanted));
  if (names.length === 1) return regularFile(path.join(target, names[0]!));
  const quantization = text(spec.quantization);
  if (quantization && quantization !== 'none') {
    // The first part of a split model stands for all of its parts.
    const matching = names.filter((n) => n.toLowerCase().includes(quantization.toLowerCase()) && !/-0*[2-9]\d*-of-\d+\.gguf$/i.test(n));
    if (matching.length === 1) return regularFile(path.join(target, matching[0]!));
  }
  throw new InvalidInput(
    `Model folder ${target} holds ${names.length} GGUF files (${names.slice(0, 8).join(', ')}${names.length > 8 ? ', ...' : ''}) and ` +
      `quantization ${quantization ?? '(none)'} does not pick one: launch with the quantization in a file's name, or with model_path naming the file`,
  );
}

async function regularFile(file: string): Promise<string> {
  if (!(await stat(file).catch(() => null))?.isFile()) throw new InvalidInput(`Model file ${file} is not a regular file`);
  return file;
}

function hubOf(spec: GgufLocation): Hub {
  const cacheDir = text(spec.cache_dir) ?? path.join(process.cwd(), 'cache');
  const revision = text(spec.model_revision);
  if (text(spec.model_hub) === 'modelscope') {
    // HANGAR_MODELSCOPE_ENDPOINT (MODELSCOPE_ENDPOINT, the modelscope package's, also works); the file
    // download of ModelScope's HTTP API (docs/registry.md, "The hubs"), which takes Range.
    const endpoint = (process.env.HANGAR_MODELSCOPE_ENDPOINT || process.env.MODELSCOPE_ENDPOINT || 'https://www.modelscope.cn').replace(/\/+$/, '');
    return {
      name: 'modelscope',
      endpoint,
      url: (id, file) => `${endpoint}/api/v1/models/${id.split('/').map(encodeURIComponent).join('/')}/repo?${new URLSearchParams({ Revision: revision ?? 'master', FilePath: file }).toString()}`,
      // ModelScope's own layout (MODELSCOPE_CACHE=<cache>/modelscope), which the cache routes read.
      cacheFolder: (id) => path.join(cacheDir, 'modelscope', 'models', ...id.split('/')),
    };
  }
  const endpoint = (process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
  return {
    name: 'huggingface',
    endpoint,
    // Each path segment encoded: a GGUF file may sit in a quantization's folder.
    url: (id, file) => `${endpoint}/${id}/resolve/${encodeURIComponent(revision ?? 'main')}/${file.split('/').map(encodeURIComponent).join('/')}`,
    // huggingface_hub's layout under the runtime's cache_dir, so the cache routes list it.
    cacheFolder: (id) => path.join(cacheDir, 'huggingface', `models--${id.split('/').join('--')}`, 'snapshots', revision ?? 'main'),
  };
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => null))?.isFile() ?? false;
}

async function download(hub: Hub, modelId: string, files: string[], progress: Progress, lookupTimeoutMs: number): Promise<string> {
  const folder = hub.cacheFolder(modelId);
  const targets = files.map((file) => path.join(folder, file));
  const missing = [];
  for (const [i, target] of targets.entries()) if (!(await exists(target))) missing.push(i);
  if (missing.length === 0) {
    progress(DOWNLOAD_SHARE, 'download', `Using the cached ${files[0]} of ${modelId}`);
    return targets[0]!;
  }
  const where = `${modelId} (${files.length === 1 ? files[0] : `${files.length} parts of ${files[0]}`})`;
  const offline = hub.name === 'huggingface' ? process.env.HF_HUB_OFFLINE : undefined;
  if (offline && offline !== '0' && offline.toLowerCase() !== 'false') {
    throw new InvalidInput(`Cannot download ${where}: offline mode is on and the file is not in the cache ${folder}. ${LOCAL_HINT}`);
  }
  progress(0, 'download', `Looking up ${where} on ${hub.endpoint}`);
  // Each file's own folder: unsloth and bartowski keep big quantizations in one
  // (`BF16/Model-BF16-00001-of-00002.gguf`), and its lock could not be made (500 ENOENT).
  for (const target of new Set(targets.map((t) => path.dirname(t)))) await mkdir(target, { recursive: true });
  let reported = 0;
  // One part after another, each asked for when its turn comes (an answer left unread
  // while other parts download could be dropped by the hub); progress counts the parts
  // done and the bytes of the one under way.
  for (const [n, i] of missing.entries()) {
    const report = (received: number, size: number): void => {
      const now = Date.now();
      if (now - reported < REPORT_EVERY_MS) return;
      reported = now;
      const fraction = (n + (size > 0 ? Math.min(1, received / size) : 0)) / missing.length;
      progress(DOWNLOAD_SHARE * fraction, 'download', `Downloading ${where}: ${Math.round(fraction * 100)}%`);
    };
    await withFileLock(targets[i]!, () => progress(DOWNLOAD_SHARE * (n / missing.length), 'download', `Waiting for another download of ${files[i]}`), async () => {
      // Another replica may have fetched it while this one waited for the lock.
      if (!(await exists(targets[i]!))) await fetchFile(hub, modelId, files[i]!, targets[i]!, where, folder, lookupTimeoutMs, report);
    });
  }
  progress(DOWNLOAD_SHARE, 'download', `Downloaded ${where}`);
  return targets[0]!;
}

/**
 * Fetches one file into `target`: into `<target>.incomplete` first, which a later try
 * resumes with a Range request (as huggingface_hub does), then checked against the
 * hub's size and sha256 (`X-Linked-Size`, `X-Linked-Etag` of LFS files) and renamed.
 * A file that does not match is deleted, never loaded; one that cannot fit on the
 * disk is refused before a byte of it is written. A connection that drops or sends
 * nothing for twice `timeoutMs` mid-file is asked again from where it stopped, three times
 * (1, 2, 4 s apart); still failing, the launch fails as "try again later" (503), and
 * the next launch resumes it.
 */
async function fetchFile(
  hub: Hub, modelId: string, file: string, target: string, where: string, folder: string, timeoutMs: number,
  report: (received: number, size: number) => void,
): Promise<void> {
  const partial = `${target}.incomplete`;
  let expected: ExpectedFile;
  for (let attempt = 1; ; attempt++) {
    const part = await fetchPart(hub, modelId, file, partial, where, folder, timeoutMs, report);
    expected = part.expected;
    const failure = part.failure;
    if (failure === null) break;
    const received = (await stat(partial).catch(() => null))?.size ?? 0;
    if (attempt > RETRIES) {
      // The partial file is kept: the next launch asks only for the rest.
      throw new SourceUnreachable(`Downloading ${file} of ${modelId} from ${hub.endpoint} failed after ${sizeText(received)}: ${causeOf(failure)}; ` +
        `asked ${RETRIES} more times. Launch again later to resume it. ${LOCAL_HINT}`);
    }
    await new Promise((resolve) => setTimeout(resolve, retryWaitMs(attempt)));
  }
  const bad = await mismatch(partial, expected);
  if (bad) {
    await rm(partial, { force: true });
    throw new InvalidInput(`Downloaded ${file} of ${modelId}, but ${bad}; the bad copy was removed. Launch again to fetch it anew.`);
  }
  await rename(partial, target);
}

/**
 * One GET of the rest of a file, appended to `partial`: what the hub said the whole file
 * is, and `failure` null when it is all here, else the network failure that cut it
 * (the caller asks again). What is the request's or the disk's fault, or the hub's
 * answer refusing it, is thrown.
 */
async function fetchPart(
  hub: Hub, modelId: string, file: string, partial: string, where: string, folder: string, timeoutMs: number,
  report: (received: number, size: number) => void,
): Promise<{ failure: unknown; expected: ExpectedFile }> {
  let offset = (await stat(partial).catch(() => null))?.size ?? 0;
  const controller = new AbortController();
  let response = await openHubFile(hub, hub.url(modelId, file), offset, timeoutMs, (why) =>
    `Cannot download ${where}: ${why}, and the file is not in the cache ${folder}. ${LOCAL_HINT}`, controller,
  );
  const start = Number(/^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1] ?? Number.NaN);
  // 416: the partial file is as long as the hub's or longer; a 206 from elsewhere than
  // its end is not the rest of it. Either way, start again rather than stitch it wrong.
  if ((response.status === 416 && offset > 0) || (response.status === 206 && start !== offset)) {
    await response.body?.cancel();
    await rm(partial, { force: true });
    offset = 0;
    response = await openHubFile(hub, hub.url(modelId, file), 0, timeoutMs, (why) => `Cannot download ${where}: ${why}. ${LOCAL_HINT}`, controller);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    // Busy or failing for now (after openHubFile's retries): a 503 to try later, not a 400 to fix the request.
    if (TRANSIENT.has(response.status)) throw new SourceUnreachable(`Cannot download ${file} of ${modelId}: the hub ${hub.endpoint} answered HTTP ${response.status}; try again later.`);
    throw new InvalidInput(`Cannot download ${file} of ${modelId} from ${hub.endpoint}: HTTP ${response.status}. ${LOCAL_HINT}`);
  }
  if (response.status !== 206) offset = 0; // the whole file came: the partial one is replaced
  const expected = expectedFile(response.headers, offset);
  const need = expected.size !== null ? expected.size - offset : 0;
  const free = await freeBytes(folder);
  if (need > free) {
    await response.body.cancel();
    throw new InvalidInput(`Cannot download ${file} of ${modelId}: it needs ${sizeText(need)} more on disk and ${folder} has ${sizeText(free)} free. ` +
      'Free some space (DELETE /v1/cache/models removes cached models) or set HANGAR_HOME to a bigger disk.');
  }
  let received = offset;
  // Each piece is handed to the file as soon as it arrives, and the download waits only
  // when the disk falls behind: a fetch body that fails drops the pieces still queued in
  // it, and whatever arrived before a failure must be on disk for the next try to resume.
  const out = createWriteStream(partial, { mode: 0o644, flags: offset > 0 ? 'a' : 'w' });
  // A disk that fails (full, read-only) fails this download, not the runtime.
  let diskError: Error | null = null;
  out.on('error', (err) => {
    diskError ??= err;
  });
  // A hub that stops sending without closing held the launch until the load's stall
  // limit (15 minutes); huggingface_hub gives up on a read after 10 s: twice the wait
  // for an answer here (5 s), as long.
  const stallMs = 2 * timeoutMs;
  let stall: NodeJS.Timeout | undefined;
  const watch = (): void => {
    clearTimeout(stall);
    stall = setTimeout(() => controller.abort(new Error(`no bytes for ${stallMs / 1000}s`)), stallMs);
  };
  let failure: unknown = null;
  let overrun: InvalidInput | null = null;
  try {
    watch();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      watch();
      if (diskError) throw diskError;
      received += chunk.length;
      // Past the declared size: a hub that sends more would fill the disk before the size check at the end.
      if (expected.size !== null && received > expected.size) {
        overrun = new InvalidInput(`Downloading ${file} of ${modelId} from ${hub.endpoint}: the hub sent more than the ${sizeText(expected.size)} it declared; the copy was removed.`);
        throw overrun;
      }
      report(received, expected.size ?? 0);
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } catch (err) {
    failure = controller.signal.aborted ? controller.signal.reason : err;
  } finally {
    clearTimeout(stall);
  }
  await new Promise<void>((resolve) => (out.destroyed ? resolve() : out.end(() => resolve())));
  if (overrun) {
    await response.body.cancel().catch(() => {});
    await rm(partial, { force: true });
    throw overrun;
  }
  if (diskError) {
    await response.body.cancel().catch(() => {});
    throw new InvalidInput(`Downloading ${file} of ${modelId} failed after ${sizeText(received)}: the disk refused it (${causeOf(diskError)}). ` +
      'Free some space (DELETE /v1/cache/models removes cached models) or set HANGAR_HOME to a bigger disk, then launch again to resume it.');
  }
  return { failure, expected };
}

interface ExpectedFile {
  size: number | null;
  sha256: string | null;
}

/** The whole file's size and sha256 as the hub's headers give them (LFS files: X-Linked-*). */
function expectedFile(headers: Headers, offset: number): ExpectedFile {
  const etag = (headers.get('x-linked-etag') ?? headers.get('etag') ?? '').replace(/^W\//, '').replaceAll('"', '');
  const total = headers.get('content-range')?.match(/\/(\d+)$/)?.[1];
  const length = headers.get('content-length');
  const size = headers.get('x-linked-size') ?? total ?? (length !== null ? String(Number(length) + offset) : null);
  return { size: size !== null && Number.isFinite(Number(size)) ? Number(size) : null, sha256: /^[0-9a-f]{64}$/.test(etag) ? etag : null };
}

async function mismatch(file: string, expected: ExpectedFile): Promise<string | null> {
  const size = (await stat(file)).size;
  if (expected.size !== null && size !== expected.size) return `it has ${size} bytes where the hub said ${expected.size}`;
  if (expected.sha256 === null) return null;
  const digest = createHash('sha256');
  await pipeline(createReadStream(file), digest);
  const actual = digest.digest('hex');
  return actual === expected.sha256 ? null : `its sha256 ${actual} is not the hub's ${expected.sha256}`;
}

async function freeBytes(folder: string): Promise<number> {
  const fs = await statfs(folder).catch(() => null);
  return fs ? fs.bavail * fs.bsize : Number.POSITIVE_INFINITY;
}

function sizeText(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * Runs `fetch` holding `<target>.lock` (created exclusively, holding our pid), so that
 * two runtimes fetching the same file (two replicas, two entries of one model) never
 * write one partial file at once. A lock whose process is gone is taken over; while
 * another live process holds it, `waiting` is called every few seconds (the load's
 * progress, so the control plane does not take the wait for a stall).
 */
async function withFileLock(target: string, waiting: () => void, fetch: () => Promise<void>): Promise<void> {
  const lock = `${target}.lock`;
  let lastSaid = 0;
  for (;;) {
    try {
      const handle = await fsOpen(lock, 'wx', 0o644);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
      // An empty lock just made is its owner between creating and writing it.
      const young = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? 0) < 2000;
      if ((!Number.isSafeInteger(owner) || owner <= 0) && !young) {
        await rm(lock, { force: true });
        continue;
      }
      if (owner > 0 && !alive(owner)) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() - lastSaid > 5000) {
        lastSaid = Date.now();
        waiting();
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    await fetch();
  } finally {
    await rm(lock, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
