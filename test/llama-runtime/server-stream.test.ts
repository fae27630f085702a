import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RelayPace } from '../../src/llama-runtime/relay-pace.js';
import { ResponseParser, streamEvents, type ServerEvent } from '../../src/llama-runtime/engine/server-stream.js';

const OK_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const event = (value: unknown): string => chunk(`data: ${JSON.stringify(value)}\n\n`);

/** Feeds a response to a parser in pieces of `size` bytes (1: every byte alone). */
function parseInPieces(response: string, size: number): { parser: ResponseParser; events: ServerEvent[] } {
  const parser = new ResponseParser();
  const bytes = Buffer.from(response);
  const events: ServerEvent[] = [];
  for (let at = 0; at < bytes.length; at += size) events.push(...parser.feed(bytes.subarray(at, at + size)));
  return { parser, events };
}

describe("llama-server's streamed answer, parsed as it is read", () => {
  const response = OK_HEAD + event({ tokens: [1], content: 'é' }) + event({ tokens: [2, 3], content: '€ two' }) + chunk('data: {"tokens":[4],"stop":true}\n\n') + '0\r\n\r\n';

  it('gives the same events whichever way the reads cut the status, headers, chunk sizes, data and UTF-8 characters', () => {
    const whole = parseInPieces(response, response.length);
    expect(whole.parser.status).toBe(200);
    expect(whole.parser.done).toBe(true);
    expect(whole.events).toEqual([{ tokens: [1], content: 'é' }, { tokens: [2, 3], content: '€ two' }, { tokens: [4], stop: true }]);
    for (const size of [1, 2, 3, 7, 64]) {
      const cut = parseInPieces(response, size);
      expect(cut.events).toEqual(whole.events);
      expect(cut.parser.done).toBe(true);
    }
  });

  it('takes an event split across chunks, and two events in one chunk', () => {
    const text = `data: ${JSON.stringify({ tokens: [9] })}\n\ndata: ${JSON.stringify({ tokens: [10] })}\n\n`;
    const split = OK_HEAD + chunk(text.slice(0, 5)) + chunk(text.slice(5)) + '0\r\n\r\n';
    expect(parseInPieces(split, 4).events).toEqual([{ tokens: [9] }, { tokens: [10] }]);
  });

  it('takes a body framed by the end of the connection whole when the connection closes', () => {
    const parser = new ResponseParser();
    const events = parser.feed(Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {"tokens":[5]}\n\n`));
    expect(events).toEqual([{ tokens: [5] }]);
    expect(parser.done).toBe(false);
    parser.endOfInput();
    expect(parser.done).toBe(true);
    const cut = new ResponseParser();
    cut.feed(Buffer.from(OK_HEAD + chunk('data: {"tokens":[1]}\n\n')));
    cut.endOfInput();
    expect(cut.done).toBe(false); // a chunked answer without its last chunk was cut
  });

  it('reads an error answer with a Content-Length as its message, and stops at its length', () => {
    const body = JSON.stringify({ error: { code: 400, message: 'the prompt is too long', type: 'invalid_request_error' } });
    const { parser, events } = parseInPieces(`HTTP/1.1 400 Bad Request\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, 5);
    expect(events).toEqual([]);
    expect(parser.status).toBe(400);
    expect(parser.done).toBe(true);
    expect(parser.errorDetail()).toBe('the prompt is too long');
  });

  it('refuses what is not an HTTP answer, a bad chunk size, and a head that never ends', () => {
    expect(() => new ResponseParser().feed(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow('no HTTP status line');
    expect(() => new ResponseParser().feed(Buffer.from(OK_HEAD + 'zz\r\n'))).toThrow('bad chunk size');
    const parser = new ResponseParser();
    expect(() => {
      for (let i = 0; i < 100; i++) parser.feed(Buffer.from(`X-Filler: ${'a'.repeat(1000)}\r\n`));
    }).toThrow('over 64 KiB');
  });
});

describe('a stream read over a Unix socket, held by the relay pace', () => {
  let folder = '';
  let server: net.Server | null = null;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = null;
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  /** A stand-in for llama-server's stream: a token every `everyMs`, `count` of them, then the end. */
  async function tokenServer(count: number, everyMs: number, head = OK_HEAD): Promise<{ socketPath: string; requests: string[] }> {
    folder = mkdtempSync(path.join(os.tmpdir(), 'hangar-stream-'));
    const socketPath = path.join(folder, 's.sock');
    const requests: string[] = [];
    server = net.createServer((socket) => {
      // A client that went away (the abort test) leaves writes failing with EPIPE: the stream just stops.
      let gone = false;
      socket.on('error', () => (gone = true));
      socket.on('close', () => (gone = true));
      socket.once('data', (request) => {
        requests.push(request.toString());
        socket.write(head);
        let sent = 0;
        const timer = setInterval(() => {
          if (gone || socket.destroyed) return clearInterval(timer);
          sent++;
          socket.write(event({ tokens: [sent], stop: sent === count }));
          if (sent === count) {
            clearInterval(timer);
            socket.end('0\r\n\r\n');
          }
        }, everyMs);
      });
    });
    await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
    return { socketPath, requests };
  }

  it('sends the request, and yields every token once, in order, a read at a time', async () => {
    const { socketPath, requests } = await tokenServer(20, 1);
    const tokens: number[] = [];
    for await (const events of streamEvents(socketPath, '/completion', { prompt: [1, 2] }, new AbortController().signal, null)) {
      for (const e of events) tokens.push(...(e.tokens as number[]));
    }
    expect(tokens).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(requests[0]).toMatch(/^POST \/completion HTTP\/1\.1\r\n/);
    expect(requests[0]).toContain('\r\n\r\n{"prompt":[1,2]}');
  });

  it('reads nothing while the pace holds the stream: the tokens of an interval arrive in one read', async () => {
    const { socketPath } = await tokenServer(30, 2);
    const pace = new RelayPace(25);
    const reads: number[][] = [];
    const started = performance.now();
    for await (const events of streamEvents(socketPath, '/completion', {}, new AbortController().signal, pace)) {
      reads.push(events.flatMap((e) => e.tokens as number[]));
      pace.stepSent(); // as the outbox does after each frame
    }
    const elapsed = performance.now() - started;
    expect(reads.flat()).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    // A read at most every 25 ms (and the first, not held): tokens 2 ms apart share reads.
    expect(reads.length).toBeLessThanOrEqual(Math.floor(elapsed / 25) + 2);
    expect(reads.length).toBeLessThan(30);
  });

  it('holds a stream one interval at most, however often other answers send steps of their own', async () => {
    const { socketPath } = await tokenServer(40, 2);
    const pace = new RelayPace(30);
    // Other calls' first tokens and ends leave every 5 ms without waiting for the pace.
    // Counted rather than timed: a stalled machine delays both the steps and the reads,
    // so the count between two reads measures the hold in intervals whatever the load.
    let othersSteps = 0;
    const stepsAtRead: number[] = [];
    const others = setInterval(() => {
      othersSteps++;
      pace.stepSent();
    }, 5);
    try {
      for await (const events of streamEvents(socketPath, '/completion', {}, new AbortController().signal, pace)) {
        void events;
        stepsAtRead.push(othersSteps);
        pace.stepSent();
      }
    } finally {
      clearInterval(others);
    }
    expect(stepsAtRead.length).toBeGreaterThan(1);
    // One interval is about 6 of those steps. A read that the steps had paused again
    // before it happened would wait a second interval or more (seen before the fix: 25).
    const between = stepsAtRead.slice(1).map((n, i) => n - stepsAtRead[i]!);
    expect(Math.max(...between)).toBeLessThan(12);
  }, 10_000); // a stream starved by the other steps would never end: fail in bounded time

  it('never holds a stream llama-server paces itself (its answer says so): its end is read as it comes', async () => {
    const pacedHead = OK_HEAD.replace('\r\n\r\n', '\r\nX-Hangar-Stream-Pace: 10\r\n\r\n');
    const { socketPath } = await tokenServer(12, 2, pacedHead);
    // A pace far longer than the test may run: a stream held by it would never end.
    const pace = new RelayPace(600_000);
    const tokens: number[] = [];
    for await (const events of streamEvents(socketPath, '/completion', {}, new AbortController().signal, pace)) {
      tokens.push(...events.flatMap((e) => e.tokens as number[]));
      pace.stepSent();
    }
    expect(tokens).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    // A step now waits only for the rest of its tick's writes, not for the interval.
    expect(pace.wait()).toBeLessThanOrEqual(2);
  }, 10_000);

  it('ends with the reason when the answer stops early, and closes the connection when aborted', async () => {
    const { socketPath } = await tokenServer(1000, 5);
    const controller = new AbortController();
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const events of streamEvents(socketPath, '/completion', {}, controller.signal, null)) {
          seen.push(...events.flatMap((e) => e.tokens as number[]));
          if (seen.length >= 3) controller.abort(new Error('the client went away'));
        }
      })(),
    ).rejects.toThrow('the client went away');
    expect(seen.length).toBeLessThan(10);
    const cut = await tokenServerThatHangsUp();
    await expect(
      (async () => {
        for await (const events of streamEvents(cut, '/completion', {}, new AbortController().signal, null)) void events;
      })(),
    ).rejects.toThrow('the connection closed before the answer ended');
  });

  async function tokenServerThatHangsUp(): Promise<string> {
    const socketPath = path.join(folder, 'cut.sock');
    const cutServer = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => socket.end(OK_HEAD + event({ tokens: [1] })));
    });
    await new Promise<void>((resolve) => cutServer.listen(socketPath, resolve));
    cutServer.unref();
    return socketPath;
  }
});
