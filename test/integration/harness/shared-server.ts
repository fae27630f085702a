import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { client } from './http.js';
import { removeHome, startServer, type TestServer } from './server.js';
import { tinyGguf, tinyGgufRegistration, tinyLlm, tinyLlmRegistration } from './tiny-models.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the server the `shared` project's files share (see below). */
    sharedServerUrl: string;
    /** The tiny LLM's end-of-sequence token id, for tests that bias toward it. */
    sharedTinyEos: number;
    /** A file the shared server's JSON log lines are appended to as it prints them (sharedServerLogs). */
    sharedServerLog: string;
  }
}

/**
 * One server for the files of vitest's `shared` project: files that only ask models
 * questions, never stop, restart or break them, and need no auth or settings of their
 * own. It serves the same three models to every such file, launched once:
 *
 * - `tiny`: the tiny Llama on the Transformers engine (chat and generate, no tools);
 * - `tf`: the same registered with the tools ability (a file checks that `tiny` refuses tools);
 * - `lc`: the same weights as a Q8_0 GGUF on the llama.cpp engine;
 * - `sim`: the simulator, 1 ms a token.
 *
 * A file that kills, restarts or corrupts anything, counts what the whole server did,
 * or needs a home of its own, starts its own server instead (startServer).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let server: TestServer | undefined;
  let log: WriteStream | undefined;
  try {
    server = await startServer();
    // The test files run in other processes: they read the server's log from a file.
    const logFile = path.join(server.home, 'server-log.jsonl');
    log = createWriteStream(logFile);
    server.process.stdout?.on('data', (chunk: Buffer) => log?.write(chunk));
    project.provide('sharedServerLog', logFile);
    const api = client(server.url);
    const tiny = tinyLlm();
    const gguf = tinyGguf();
    for (const reg of [
      tinyLlmRegistration('tiny-chat', tiny.path),
      tinyLlmRegistration('tiny-tools', tiny.path, ['chat', 'generate', 'tools']),
      tinyGgufRegistration('tiny-chat-gguf', gguf),
    ]) {
      const res = await api.post('/v1/model_registrations/LLM', reg);
      if (res.status !== 200) throw new Error(`registration failed: ${res.status} ${res.text}`);
    }
    const launches = await Promise.all([
      api.post('/v1/models', { model_name: 'tiny-chat', model_engine: 'Transformers', model_uid: 'tiny' }),
      api.post('/v1/models', { model_name: 'tiny-tools', model_engine: 'Transformers', model_uid: 'tf' }),
      api.post('/v1/models', { model_name: 'tiny-chat-gguf', model_engine: 'llama.cpp', quantization: 'q8_0', model_uid: 'lc' }),
      api.post('/v1/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'sim', step_ms: 1, ttft_ms: 0 }),
    ]);
    for (const l of launches) if (l.status !== 200) throw new Error(`launch failed: ${l.status} ${l.text}`);
    project.provide('sharedServerUrl', server.url);
    project.provide('sharedTinyEos', tiny.eos_token_id);
  } catch (err) {
    log?.end();
    await server?.stop();
    if (server) await removeHome(server.home);
    throw err;
  }
  const started = server;
  const written = log;
  return async () => {
    await started.stop();
    written?.end();
    await removeHome(started.home);
  };
}

/** The JSON log lines the shared server printed so far (from a test file of the `shared` project). */
export async function sharedServerLogs(logFile: string): Promise<Array<Record<string, unknown>>> {
  const entries: Array<Record<string, unknown>> = [];
  for (const line of (await readFile(logFile, 'utf8')).split('\n')) {
    try {
      entries.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a JSON line, or the last one half written
    }
  }
  return entries;
}
