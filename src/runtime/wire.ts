import { Decoder, Encoder } from '@msgpack/msgpack';
import { wellFormed } from './well-formed-text.js';

/**
 * Message types of runtime protocol v2 (docs/runtime-protocol.md). One frame per
 * message: byte 0 is the type, the rest one msgpack map. v2 added BATCH.
 */
export const PROTOCOL_VERSION = 3;
/**
 * v3: the runtime's work loop sends its data messages from a DEALER of its own, whose
 * routing id is the replica's plus this (docs/runtime-protocol.md, "Sockets").
 */
export const WRITER_SUFFIX = '/out';

export const MessageType = {
  HELLO: 0x01,
  LOAD: 0x02,
  PROGRESS: 0x03,
  READY: 0x04,
  LOAD_FAILED: 0x05,
  CALL: 0x10,
  RESULT: 0x11,
  CHUNK: 0x12,
  END: 0x13,
  ERROR: 0x14,
  /** v2: `{items: [[type, body], ...]}`, the RESULT/CHUNK/END/ERROR messages of one engine step. */
  BATCH: 0x15,
  PING: 0x20,
  PONG: 0x21,
  ABORT: 0x22,
  SHUTDOWN: 0x23,
  DEAD: 0x24,
} as const;
export type MessageTypeCode = (typeof MessageType)[keyof typeof MessageType];

export interface Message {
  type: number;
  body: Record<string, unknown>;
}

// One of each for the process: `encode()`/`decode()` build a new one (and its buffers)
// per call, which showed on the hot path. Both are synchronous, so sharing is safe.
let encoder = new Encoder({ ignoreUndefined: true });
const decoder = new Decoder();
/**
 * The shared encoder keeps the buffer its largest message grew (twice that size, as
 * msgpack grows it): one 50 MiB prompt held about 100 MiB for the life of the process.
 * Past this size the encoder is replaced, and the large buffer goes with it.
 */
const KEPT_ENCODER_BYTES = 4 * 1024 * 1024;

export function encodeMessage(type: MessageTypeCode, body: Record<string, unknown>): Buffer {
  const payload = encoder.encodeSharedRef(wellFormed(body));
  const frame = Buffer.allocUnsafe(payload.byteLength + 1);
  frame[0] = type;
  frame.set(payload, 1);
  if (payload.byteLength > KEPT_ENCODER_BYTES) encoder = new Encoder({ ignoreUndefined: true });
  return frame;
}

export function decodeMessage(frame: Buffer): Message {
  if (frame.length < 1) throw new Error('empty frame');
  const body = decoder.decode(frame.subarray(1));
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new Error(`message body of type 0x${frame[0]!.toString(16)} is not a map`);
  }
  return { type: frame[0]!, body: body as Record<string, unknown> };
}

/** The messages of a BATCH body (`{items: [[type, body], ...]}`), and how many items were not of that shape. */
export function batchItems(body: Record<string, unknown>): { items: Message[]; malformed: number } {
  const raw = Array.isArray(body.items) ? (body.items as unknown[]) : null;
  if (!raw) return { items: [], malformed: 1 };
  const items: Message[] = [];
  for (const item of raw) {
    if (Array.isArray(item) && item.length === 2 && typeof item[0] === 'number' && item[1] !== null && typeof item[1] === 'object' && !Array.isArray(item[1])) {
      items.push({ type: item[0], body: item[1] as Record<string, unknown> });
    }
  }
  return { items, malformed: raw.length - items.length };
}

/** docs/runtime-protocol.md, "Versions": what a control plane says to a runtime of another version. */
export function protocolMismatch(theirs: unknown): string {
  const version = typeof theirs === 'number' ? `protocol ${theirs}` : 'an unknown protocol';
  const advice =
    theirs === 1 || theirs === 2
      ? `Version ${theirs} ${theirs === 1 ? 'sends every token as its own message' : 'relays tokens through a second thread'}; this control plane needs version 3 (BATCH frames from the work loop's own writer socket). Update the runtime: run \`npm run setup\` (or use the same Hangar release on every host).`
      : 'Use the runtime from the same Hangar release as the control plane.';
  return `the runtime speaks ${version}, the control plane protocol ${PROTOCOL_VERSION}. ${advice}`;
}
