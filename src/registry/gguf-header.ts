import { open } from 'node:fs/promises';

/**
 * A GGUF file's metadata, read with bounds (the format: ggml's docs/gguf.md). The
 * header comes from a hub or a user's file, so nothing in it is trusted: every length
 * it claims must fit in what is left of `maxBytes`, which caps the bytes read and held.
 * node-llama-cpp's reader, used before, allocated whatever length a header claimed
 * (a string "2^40 bytes long" took the control plane to 12 GB) and had no time limit.
 *
 * Only scalar values are kept (strings, numbers, booleans); arrays (the vocabulary,
 * merges, scores) are walked over, not kept: nothing here needs them.
 */
export type GgufScalar = string | number | boolean;

/** Where the header's bytes come from: at most `length` bytes from `offset`, fewer only at the end of the file. */
export interface ByteSource {
  read(offset: number, length: number): Promise<Buffer>;
}

/** A header that is not GGUF, is cut short, or claims more than the cap. */
export class GgufHeaderError extends Error {}

/** Large enough for the biggest vocabularies (Gemma's 256k tokens with scores and merges take ~20 MiB). */
export const MAX_GGUF_HEADER_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;
const MAX_ARRAY_NESTING = 4;

const FIXED_SIZES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;

/**
 * `stopBefore` ends the read early, before the value of the key it is true for: a
 * caller that needs only the model's shape stops at the tokenizer's keys, which hold
 * nearly all of a header's bytes (the vocabulary), and reads a few KiB of the file.
 */
export async function readGgufMetadata(source: ByteSource, maxBytes = MAX_GGUF_HEADER_BYTES, stopBefore?: (key: string, metadata: ReadonlyMap<string, GgufScalar>) => boolean): Promise<Map<string, GgufScalar>> {
  const reader = new BoundedReader(source, maxBytes);
  if ((await reader.bytes(4)).toString('latin1') !== 'GGUF') throw new GgufHeaderError('not a GGUF file (its first bytes are not "GGUF")');
  const version = (await reader.bytes(4)).readUInt32LE(0);
  // Version 1 (2023) used 32-bit lengths; a byte-swapped version is a big-endian file.
  if (version !== 2 && version !== 3) throw new GgufHeaderError(`GGUF version ${version} is not read here (versions 2 and 3 are)`);
  await reader.u64(); // tensor count: the tensors' table follows the metadata and is not read
  const count = await reader.u64();
  const metadata = new Map<string, GgufScalar>();
  // Each entry takes at least 12 bytes, so the cap ends a count that lies long before this loop would.
  for (let i = 0n; i < count; i++) {
    const key = await reader.string();
    if (stopBefore?.(key, metadata)) break;
    const type = await reader.u32();
    const value = await readValue(reader, type, 0);
    if (value !== undefined) metadata.set(key, value);
  }
  return metadata;
}

async function readValue(reader: BoundedReader, type: number, depth: number): Promise<GgufScalar | undefined> {
  if (type === STRING) return reader.string();
  if (type === ARRAY) {
    if (depth >= MAX_ARRAY_NESTING) throw new GgufHeaderError(`arrays nested more than ${MAX_ARRAY_NESTING} deep`);
    const elementType = await reader.u32();
    const length = await reader.u64();
    const size = FIXED_SIZES[elementType];
    if (size !== undefined) await reader.skip(length * BigInt(size));
    // A vocabulary's strings are walked over, never decoded: nothing here keeps them.
    else if (elementType === STRING) for (let i = 0n; i < length; i++) await reader.skip(await reader.u64());
    else for (let i = 0n; i < length; i++) await readValue(reader, elementType, depth + 1);
    return undefined;
  }
  const size = FIXED_SIZES[type];
  if (size === undefined) throw new GgufHeaderError(`unknown value type ${type}`);
  const b = await reader.bytes(size);
  switch (type) {
    case 0: return b.readUInt8(0);
    case 1: return b.readInt8(0);
    case 2: return b.readUInt16LE(0);
    case 3: return b.readInt16LE(0);
    case 4: return b.readUInt32LE(0);
    case 5: return b.readInt32LE(0);
    case 6: return b.readFloatLE(0);
    case 7: return b.readUInt8(0) !== 0;
    case 10: return Number(b.readBigUInt64LE(0));
    case 11: return Number(b.readBigInt64LE(0));
    default: return b.readDoubleLE(0);
  }
}

class BoundedReader {
  private buffer = Buffer.alloc(0);
  /** The file offset of `buffer[0]`: bytes already walked over are dropped. */
  private base = 0;
  private position = 0;
  private ended = false;

  constructor(private readonly source: ByteSource, private readonly maxBytes: number) {}

  async u32(): Promise<number> {
    return (await this.bytes(4)).readUInt32LE(0);
  }

  async u64(): Promise<bigint> {
    return (await this.bytes(8)).readBigUInt64LE(0);
  }

  async string(): Promise<string> {
    const length = await this.u64();
    return (await this.bytes(this.checked(length))).toString('utf8');
  }

  async skip(length: bigint): Promise<void> {
    let left = this.checked(length);
    // In chunks: a skipped array need not be held at once.
    while (left > 0) {
      const step = Math.min(left, CHUNK_BYTES);
      await this.bytes(step);
      left -= step;
    }
  }

  async bytes(length: number): Promise<Buffer> {
    this.checked(BigInt(length));
    await this.fill(length);
    const start = this.position - this.base;
    this.position += length;
    return this.buffer.subarray(start, start + length);
  }

  /** A claimed length as a number, once it fits in what the cap leaves. */
  private checked(length: bigint): number {
    if (length > BigInt(this.maxBytes - this.position)) {
      throw new GgufHeaderError(`the header claims ${length} more bytes at offset ${this.position}, past the ${this.maxBytes}-byte limit on a GGUF header`);
    }
    return Number(length);
  }

  private async fill(length: number): Promise<void> {
    const have = this.base + this.buffer.length - this.position;
    if (have >= length) return;
    // Keep only the unread tail, then read what is missing (at least a chunk, never past the cap).
    const tail = this.buffer.subarray(this.position - this.base);
    const want = Math.min(Math.max(length - have, CHUNK_BYTES), this.maxBytes - (this.position + have));
    const parts: Buffer[] = [tail];
    let got = 0;
    while (got < length - have && !this.ended) {
      const chunk = await this.source.read(this.position + have + got, want - got);
      if (chunk.length === 0) this.ended = true;
      parts.push(chunk);
      got += chunk.length;
    }
    this.buffer = Buffer.concat(parts);
    this.base = this.position;
    if (this.buffer.length < length) throw new GgufHeaderError(`the file ends inside its header (at byte ${this.base + this.buffer.length})`);
  }
}

/** A local file as a ByteSource, for `readGgufMetadata`; `close` when done. */
export async function fileSource(file: string): Promise<ByteSource & { close(): Promise<void> }> {
  const handle = await open(file, 'r');
  return {
    async read(offset, length) {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    },
    close: () => handle.close(),
  };
}
