import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Router } from 'zeromq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageType, batchItems, decodeMessage, encodeMessage, type Message } from '../../src/runtime/wire.js';
import { repoRoot } from '../integration/harness/server.js';
import { tinyGguf, type TinyGguf } from '../integration/harness/tiny-models.js';

const ENTRY = path.join(repoRoot, 'dist', 'llama-runtime', 'main.js');

/** A control plane's two ROUTERs and one Node runtime started against them. */
class Peer {
  readonly data = new Router();
  readonly control = new Router();
  readonly received: Message[] = [];
  readonly output: string[] = [];
  child!: ChildProcess;
  exited!: Promise<number | null>;
  private pinger: NodeJS.Timeout | null = null;
  private waiters: Array<() => void> = [];

  constructor(private readonly dir: string, readonly replica: string) {}

  async start(extra: string[] = [], ping = true): Promise<void> {
    const data = `ipc://${path.join(this.dir, `${this.replica}.data`)}`;
    const control = `ipc://${path.join(this.dir, `${this.replica}.ctl`)}`;
    await this.data.bind(data);
    await this.control.bind(control);
    void this.read(this.data);
    void this.read(this.control);
    this.child = spawn(process.execPath, [ENTRY, '--data', data, '--control', control, '--replica', this.replica, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stderr!.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    if (ping) this.pinger = setInterval(() => this.sendControl(MessageType.PING, { ts: Date.now() }), 200);
  }

  send(type: number, body: Record<string, unknown>): void {
    void this.data.send([this.replica, encodeMessage(type as never, body)]);
  }

  sendControl(type: number, body: Record<string, unknown>): void {
    void this.control.send([this.replica, encodeMessage(type as never, body)]).catch(() => {});
  }

  /** Waits for a message (BATCH items count one by one) that `match` accepts. */
  async next(match: (m: Message) => boolean, ms = 20_000): Promise<Message> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.received.find(match);
      if (found) {
        this.received.splice(this.received.indexOf(found), 1);
        return found;
      }
      if (Date.now() > deadline) throw new Error(`no matching message; got ${JSON.stringify(this.received.map((m) => m.type))}; runtime said ${this.output.join('')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  async close(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    this.data.close();
    this.control.close();
  }

  private async read(socket: Router): Promise<void> {
    try {
      for await (const [, frame] of socket) {
        const message = decodeMessage(frame!);
        if (message.type === MessageType.BATCH) this.received.push(...batchItems(message.body).items);
        else this.received.push(message);
        for (const wake of this.waiters.splice(0)) wake();
      }
    } catch {
      // closed
    }
  }
}

// The Node runtime against a bare pair of ROUTERs: the protocol's messages, meanings
// and exit codes (docs/runtime-protocol.md), with no control plane in between.
describe('the llama.cpp runtime speaks runtime protocol v3', () => {
  let dir: string;
  let gguf: TinyGguf;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-llrt-'));
    gguf = tinyGguf();
  }, 120_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const load = (uri: string) => ({ model_type: 'LLM', model_name: 'tiny', model_uid: 'tiny', replica_uid: 'tiny-0', engine: 'llama_cpp', model_uri: uri, launcher_args: {}, engine_kwargs: { n_parallel: 2 }, context_length: 512, stop: ['<|im_end|>'], model_ability: ['chat', 'generate'], chat_template: gguf.chat_template });

  it('exits with code 2 on a bad command line or relay pace', async () => {
    const child = spawn(process.execPath, [ENTRY, '--data', 'ipc:///tmp/x', '--control', 'ipc:///tmp/y'], { stdio: 'ignore' });
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(2);
    const curve = spawn(process.execPath, [ENTRY, '--data', 'ipc:///tmp/x', '--control', 'ipc:///tmp/y', '--replica', 'r'], { stdio: 'ignore', env: { ...process.env, HANGAR_CURVE_SERVER_KEY: 'short' } });
    expect(await new Promise((resolve) => curve.on('exit', resolve))).toBe(2);
    const pace = spawn(process.execPath, [ENTRY, '--data', 'ipc:///tmp/x', '--control', 'ipc:///tmp/y', '--replica', 'r'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HANGAR_RELAY_PACE_MS: 'fast' } });
    let said = '';
    pace.stderr!.on('data', (part: Buffer) => (said += part.toString()));
    expect(await new Promise((resolve) => pace.on('exit', resolve))).toBe(2);
    expect(said).toContain('HANGAR_RELAY_PACE_MS must be an integer from 0 to 100 (milliseconds), got "fast"');
  });

  it('says HELLO, loads with progress, serves calls, batches, aborts, reports stats and shuts down with code 0', async () => {
    const peer = new Peer(dir, 'tiny-0');
    try {
      await peer.start(['--heartbeat-timeout', '5']);
      const hello = await peer.next((m) => m.type === MessageType.HELLO);
      expect(hello.body).toMatchObject({ protocol: 3, replica: 'tiny-0', pid: peer.child.pid });
      peer.send(MessageType.CALL, { id: 1, method: 'generate', args: ['hi'], kwargs: {} });
      expect((await peer.next((m) => m.body.id === 1)).body).toMatchObject({ kind: 'invalid', message: 'No model is loaded yet' });

      peer.send(MessageType.LOAD, load(gguf.files.q8_0!));
      const progress = await peer.next((m) => m.type === MessageType.PROGRESS);
      expect(progress.body.stage).toMatch(/download|load/);
      const ready = await peer.next((m) => m.type === MessageType.READY);
      expect(ready.body).toMatchObject({ protocol: 3, engine: 'llama_cpp', abilities: ['chat', 'generate'], description: { context_length: 512, n_parallel: 2 } });

      peer.send(MessageType.CALL, { id: 2, method: 'nope', args: [], kwargs: {} });
      expect((await peer.next((m) => m.body.id === 2)).body).toMatchObject({ kind: 'unknown_method' });
      peer.send(MessageType.CALL, { id: 3, method: 'generate', args: 'not a list', kwargs: {} });
      expect((await peer.next((m) => m.body.id === 3)).body).toMatchObject({ kind: 'invalid', message: 'args must be a list' });
      peer.send(MessageType.CALL, { id: 4, method: 'generate', args: ['hi'], kwargs: { generate_config: { max_tokens: 'x' } } });
      expect((await peer.next((m) => m.body.id === 4)).body).toMatchObject({ kind: 'invalid', param: 'max_tokens', message: expect.stringContaining('max_tokens must be an integer') });
      // The field an invalid call is about travels as param (protocol, "Calls").
      peer.send(MessageType.CALL, { id: 40, method: 'generate', args: ['hi'], kwargs: { generate_config: { top_p: 3 } } });
      expect((await peer.next((m) => m.body.id === 40)).body).toMatchObject({ kind: 'invalid', param: 'top_p' });
      peer.send(MessageType.CALL, { id: 41, method: 'chat', args: [[{ role: 'user', content: 5 }]], kwargs: {} });
      expect((await peer.next((m) => m.body.id === 41)).body).toMatchObject({ kind: 'invalid', param: 'messages.0' });

      // Two streams at once: CHUNKs, then exactly one END each.
      for (const id of [5, 6]) peer.send(MessageType.CALL, { id, method: 'generate', args: ['Once upon a time'], kwargs: { generate_config: { max_tokens: 8, temperature: 0 } }, stream: true });
      for (const id of [5, 6]) {
        await peer.next((m) => m.type === MessageType.END && m.body.id === id);
        const last = peer.received.filter((m) => m.body.id === id && m.type === MessageType.CHUNK).at(-1)!;
        expect(last.body.value).toMatchObject({ finish_reason: 'length', usage: { completion_tokens: 8 } });
      }
      // A non-stream call: one RESULT.
      peer.send(MessageType.CALL, { id: 7, method: 'chat', args: [[{ role: 'user', content: 'hi' }]], kwargs: { generate_config: { max_tokens: 3 } } });
      expect((await peer.next((m) => m.body.id === 7 && m.type === MessageType.RESULT)).body.value).toMatchObject({ usage: { completion_tokens: 3 } });

      // An ABORT that overtakes its CALL, and one that stops a running stream.
      peer.sendControl(MessageType.ABORT, { id: 8 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      peer.send(MessageType.CALL, { id: 8, method: 'generate', args: ['hi'], kwargs: {} });
      expect((await peer.next((m) => m.body.id === 8 && m.type === MessageType.ERROR)).body.kind).toBe('aborted');
      peer.send(MessageType.CALL, { id: 9, method: 'generate', args: ['Once upon a time'], kwargs: { generate_config: { max_tokens: 400, ignore_eos: true } }, stream: true });
      await peer.next((m) => m.body.id === 9 && m.type === MessageType.CHUNK);
      peer.sendControl(MessageType.ABORT, { id: 9 });
      expect((await peer.next((m) => m.body.id === 9 && (m.type === MessageType.ERROR || m.type === MessageType.END))).body.kind).toBe('aborted');

      const pong = await peer.next((m) => m.type === MessageType.PONG && (m.body.stats as { batch_steps: number }).batch_steps > 0);
      expect(pong.body.stats).toMatchObject({ queue_depth: 0, batch_size: 0, rss_bytes: expect.any(Number) });
      expect((pong.body.stats as { batch_step_calls: number }).batch_step_calls).toBeGreaterThan(0);

      peer.sendControl(MessageType.SHUTDOWN, {});
      expect(await peer.exited).toBe(0);
    } finally {
      await peer.close();
    }
  }, 60_000);

  it('answers LOAD_FAILED invalid for a file that is not there, not a GGUF, or cut short, then exits with code 3', async () => {
    const junk = path.join(dir, 'junk.gguf');
    await writeFile(junk, 'this is not a GGUF file');
    // A download cut short: llama.cpp's own reason, not node-llama-cpp's "Failed to load model".
    const whole = await readFile(gguf.files.q8_0!);
    const cut = path.join(dir, 'cut.gguf');
    await writeFile(cut, whole.subarray(0, whole.length - 5000));
    const cases = [
      ['bad-0', path.join(dir, 'missing.gguf'), /missing\.gguf/],
      ['junk-0', junk, /llama.cpp cannot load .*junk\.gguf: it is not a GGUF file/],
      ['cut-0', cut, /llama.cpp cannot load .*cut\.gguf: tensor '.+' data is not within the file bounds.*remove the file.*launch again/],
    ] as const;
    for (const [replica, file, message] of cases) {
      const peer = new Peer(dir, replica);
      try {
        await peer.start();
        await peer.next((m) => m.type === MessageType.HELLO);
        peer.send(MessageType.LOAD, load(file));
        const failed = await peer.next((m) => m.type === MessageType.LOAD_FAILED);
        expect(failed.body).toMatchObject({ kind: 'invalid' });
        expect(failed.body.message).toMatch(message);
        // Nothing of the file's own bytes comes back (model_path may name any file the service can read).
        expect(failed.body.message).not.toContain('this is');
        expect(await peer.exited).toBe(3);
      } finally {
        await peer.close();
      }
    }
  }, 30_000);

  it('exits with code 4 when the PINGs stop', async () => {
    const peer = new Peer(dir, 'lonely-0');
    try {
      await peer.start(['--heartbeat-timeout', '1'], false);
      await peer.next((m) => m.type === MessageType.HELLO);
      expect(await peer.exited).toBe(4);
    } finally {
      await peer.close();
    }
  }, 30_000);
});
