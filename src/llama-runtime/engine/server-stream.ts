import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/** One server-sent event of a streamed completion, as llama-server sends it. */
export type ServerEvent = Record<string, unknown>;

/** Who decides when a stream's socket may be read (relay-pace.ts). */
export interface ReadGate {
  /** The relay's pace, which llama-server keeps itself when it can (an engine patch); 0: none. */
  readonly intervalMs: number;
  add(socket: net.Socket): void;
  remove(socket: net.Socket): void;
  /** The socket was read (a held stream's read after its interval). */
  read(socket: net.Socket): void;
  /** A stream's answer said llama-server writes it at the pace's ticks: its socket is read as it comes. */
  pacedByServer(): void;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * The connection to llama-server failed, as opposed to llama-server answering an error:
 * most often the server died (killed, out of memory), which ends this runtime too
 * (llama-server-process.ts). The message names no path (the socket's is the service's).
 */
export class ServerConnectionLost extends Error {
  override name = 'ServerConnectionLost';
}

/**
 * A streamed POST to llama-server over its private Unix socket, on a connection of its
 * own (llama-server closes a stream's connection when the stream ends anyway), read
 * with `onread` so that pausing the socket stops the reads in the kernel: the relay's
 * pace (relay-pace.ts) holds every stream's socket between two steps, and the
 * tokens that came meanwhile are read, parsed and relayed together in one wake-up.
 * Node's http client cannot do that: its parser resumes the socket whenever its own
 * buffer drains, so every token woke the runtime (docs/decisions.md, "llama.cpp: the
 * relay's pace").
 *
 * Parses just what llama-server answers: a status line, headers, and a body sent
 * chunked or with a Content-Length; a 200's body as server-sent events.
 */
export async function* streamEvents(socketPath: string, route: string, body: unknown, signal: AbortSignal, gate: ReadGate | null): AsyncGenerator<ServerEvent[]> {
  signal.throwIfAborted();
  const payload = Buffer.from(JSON.stringify(body));
  const parser = new ResponseParser();
  let queue: ServerEvent[] = [];
  let failure: Error | null = null;
  let closed = false;
  let gated = false;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const socket = net.connect({
    path: socketPath,
    onread: {
      buffer: Buffer.allocUnsafe(64 * 1024),
      callback: (bytes, buffer) => {
        if (gated) gate?.read(socket);
        try {
          for (const event of parser.feed(Buffer.from(buffer.buffer, buffer.byteOffset, bytes))) queue.push(event);
        } catch (err) {
          failure = err as Error;
        }
        notify();
        return true;
      },
    },
  });
  const onAbort = (): void => {
    failure ??= signal.reason instanceof Error ? signal.reason : new Error('aborted');
    socket.destroy();
    notify();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  socket.on('error', (err: NodeJS.ErrnoException) => {
    failure ??= new ServerConnectionLost(`llama-server ${route}: its connection failed (${err.code ?? err.name})`);
    notify();
  });
  socket.on('close', () => {
    parser.endOfInput();
    if (!parser.done) failure ??= new ServerConnectionLost(`llama-server ${route}: the connection closed before the answer ended`);
    closed = true;
    notify();
  });
  socket.write(`POST ${route} HTTP/1.1\r\nHost: llama-server\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n`);
  socket.write(payload);
  let seen = false;
  try {
    for (;;) {
      if (queue.length > 0) {
        // Everything one read brought, at once: the tokens of a paced step go through together.
        const events = queue;
        queue = [];
        const failed = events.find((event) => event.error);
        if (failed) throw new Error(`llama-server ${route}: ${errorText(failed)}`);
        yield events;
        // Held only from its second read on: the first token goes out with no wait. A
        // server that paces the stream itself (it says so in a header) writes only at the
        // pace's ticks, and an end at once: its socket is never held, so an end is read
        // as it comes.
        if (!seen && gate) {
          seen = true;
          if (parser.pacedByServer) gate.pacedByServer();
          else {
            gate.add(socket);
            gated = true;
          }
        }
        continue;
      }
      if (failure) throw failure;
      if (closed || parser.done) {
        if (parser.status !== 200) throw new Error(`llama-server ${route}: ${parser.status} ${parser.errorDetail()}`);
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (gated) gate?.remove(socket);
    socket.destroy();
  }
}

type Framing = { kind: 'chunked' } | { kind: 'length'; left: number } | { kind: 'close' };

/**
 * An HTTP/1.1 response, fed as it is read: the status, then the body's server-sent
 * events (for a 200) or its text (otherwise, for the error).
 */
export class ResponseParser {
  status = 0;
  done = false;
  /** The answer carries `X-Hangar-Stream-Pace`: llama-server paces the stream itself (an engine patch). */
  pacedByServer = false;
  private head: Buffer | null = Buffer.alloc(0);
  private framing: Framing = { kind: 'close' };
  /** Bytes of the body not yet decoded (a chunk-size line or chunk cut by a read). */
  private pending = Buffer.alloc(0);
  /** In a chunked body: bytes left in the current chunk, or -1 between chunks. */
  private chunkLeft = -1;
  private readonly text = new StringDecoder('utf8');
  private events = '';
  private errorBody = '';

  feed(bytes: Buffer): ServerEvent[] {
    if (this.done) return [];
    let body = bytes;
    if (this.head) {
      const head = Buffer.concat([this.head, bytes]);
      const end = head.indexOf(CRLF2);
      if (end < 0) {
        if (head.length > 64 * 1024) throw new Error('llama-server sent a response head over 64 KiB');
        this.head = head;
        return [];
      }
      this.parseHead(head.subarray(0, end).toString('latin1'));
      this.head = null;
      body = head.subarray(end + 4);
    }
    const out: ServerEvent[] = [];
    for (const piece of this.unframe(body)) this.take(piece, out);
    return out;
  }

  /** The connection closed: the end of a body framed by the close, a cut answer otherwise. */
  endOfInput(): void {
    if (this.head === null && this.framing.kind === 'close') this.done = true;
  }

  errorDetail(): string {
    const text = this.errorBody.trim();
    try {
      return errorText(JSON.parse(text) as Record<string, unknown>);
    } catch {
      return text.slice(0, 500);
    }
  }

  private parseHead(head: string): void {
    const [statusLine = '', ...lines] = head.split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!match) throw new Error(`llama-server sent no HTTP status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
    this.status = Number(match[1]);
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    this.pacedByServer = headers.has('x-hangar-stream-pace');
    if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) this.framing = { kind: 'chunked' };
    else if (headers.has('content-length')) {
      const left = Number(headers.get('content-length'));
      if (!Number.isSafeInteger(left) || left < 0) throw new Error(`llama-server sent a bad Content-Length: ${headers.get('content-length')}`);
      this.framing = { kind: 'length', left };
      if (left === 0) this.done = true;
    }
  }

  /** The body's bytes with the transfer framing taken off. */
  private *unframe(bytes: Buffer): Generator<Buffer> {
    const framing = this.framing;
    if (framing.kind === 'close') {
      if (bytes.length > 0) yield bytes;
      return;
    }
    if (framing.kind === 'length') {
      const piece = bytes.subarray(0, framing.left);
      framing.left -= piece.length;
      if (framing.left === 0) this.done = true;
      if (piece.length > 0) yield piece;
      return;
    }
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, bytes]) : bytes;
    this.pending = Buffer.alloc(0);
    while (data.length > 0 && !this.done) {
      if (this.chunkLeft < 0) {
        const eol = data.indexOf('\r\n');
        if (eol < 0) {
          if (data.length > 1024) throw new Error('llama-server sent a chunk-size line over 1 KiB');
          break;
        }
        const size = Number.parseInt(data.subarray(0, eol).toString('latin1').split(';')[0]!.trim(), 16);
        if (!Number.isSafeInteger(size) || size < 0) throw new Error('llama-server sent a bad chunk size');
        if (size === 0) {
          // The last chunk; its trailers (none from llama-server) are not read.
          this.done = true;
          return;
        }
        this.chunkLeft = size;
        data = data.subarray(eol + 2);
        continue;
      }
      if (this.chunkLeft > 0) {
        const piece = data.subarray(0, this.chunkLeft);
        this.chunkLeft -= piece.length;
        data = data.subarray(piece.length);
        yield piece;
        continue;
      }
      // chunkLeft === 0: the CRLF after a chunk's data.
      if (data.length < 2) break;
      data = data.subarray(2);
      this.chunkLeft = -1;
    }
    if (!this.done && data.length > 0) this.pending = Buffer.from(data);
  }

  private take(piece: Buffer, out: ServerEvent[]): void {
    if (this.status !== 200) {
      if (this.errorBody.length < 64 * 1024) this.errorBody += this.text.write(piece);
      return;
    }
    this.events += this.text.write(piece);
    let cut: number;
    while ((cut = this.events.indexOf('\n\n')) >= 0) {
      const block = this.events.slice(0, cut);
      this.events = this.events.slice(cut + 2);
      for (const line of block.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') continue;
        out.push(JSON.parse(data) as ServerEvent);
      }
    }
  }
}

export function errorText(value: Record<string, unknown>): string {
  const error = value.error as { message?: unknown } | string | undefined;
  if (typeof error === 'string') return error;
  if (error && typeof error.message === 'string') return error.message;
  return JSON.stringify(value).slice(0, 500);
}
