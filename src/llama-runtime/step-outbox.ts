import { MessageType, encodeMessage, type MessageTypeCode } from '../runtime/wire.js';
import type { RelayPace } from './relay-pace.js';

/**
 * Data messages of calls (RESULT, CHUNK, END, ERROR) gathered over one turn of the
 * event loop and sent as one frame: the messages of every sequence whose token came
 * in during that turn leave as one BATCH (docs/runtime-protocol.md, "Batches"); a
 * turn with one message sends it as an ordinary frame. Node has one thread, so the
 * turn is the runtime's step: the frame goes out before the next token is waited for,
 * or, while tokens come faster than the relay's pace (relay-pace.ts), once the
 * interval since the last frame is over; a call's first CHUNK and every RESULT, END
 * and ERROR never wait for the pace (the time to first token, and an answer's end).
 * `HANGAR_TOKEN_RELAY=per-token` sends every message at once, the relay benchmark's
 * baseline.
 */
export class StepOutbox {
  private items: Array<[number, Record<string, unknown>]> = [];
  private scheduled = false;
  /** A flush set for when the pace allows it. */
  private held: NodeJS.Timeout | null = null;
  /** Calls that have sent a CHUNK: their next ones may wait for the pace. */
  private readonly streaming = new Set<unknown>();
  private readonly perToken: boolean;
  /** Steps that sent call messages, and the calls they carried (the PONG stats). */
  steps = 0;
  stepCalls = 0;

  constructor(
    private readonly sendFrame: (frame: Buffer) => void,
    private readonly pace: RelayPace,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.perToken = env.HANGAR_TOKEN_RELAY === 'per-token';
  }

  push(type: MessageTypeCode, body: Record<string, unknown>): void {
    if (this.perToken) {
      this.count([[type, body]]);
      this.sendFrame(encodeMessage(type, body));
      return;
    }
    this.items.push([type, body]);
    let urgent = type !== MessageType.CHUNK;
    if (urgent) this.streaming.delete(body.id);
    else if (!this.streaming.has(body.id)) {
      this.streaming.add(body.id);
      urgent = true;
    }
    if (urgent && this.held) {
      clearTimeout(this.held);
      this.held = null;
      this.scheduled = false;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      const wait = urgent ? 0 : this.pace.wait();
      if (wait > 0) this.held = setTimeout(() => this.flush(), wait);
      else setImmediate(() => this.flush());
    }
  }

  /** Sends what is waiting now (before a message that must not pass it, or at exit). */
  flush(): void {
    this.scheduled = false;
    if (this.held) clearTimeout(this.held);
    this.held = null;
    const items = this.items;
    if (items.length === 0) return;
    this.items = [];
    this.count(items);
    const [first] = items;
    this.sendFrame(items.length === 1 ? encodeMessage(first![0] as MessageTypeCode, first![1]) : encodeMessage(MessageType.BATCH, { items }));
    this.pace.stepSent();
  }

  private count(items: Array<[number, Record<string, unknown>]>): void {
    this.steps++;
    this.stepCalls += new Set(items.map(([, body]) => body.id)).size;
  }
}
