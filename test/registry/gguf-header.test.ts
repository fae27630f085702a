import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileSource, GgufHeaderError, readGgufMetadata, type ByteSource } from '../../src/registry/gguf-header.js';
import { ggufShape, ggufShapeKnown } from '../../src/registry/weight-files.js';
import { entry, header, str, u32, u64, type Entry } from '../fixtures/gguf-bytes.js';

const llama = (extra: Entry[] = []) =>
  header([
    entry('general.architecture', 8, str('llama')),
    entry('general.size_label', 8, str('25M')),
    entry('llama.context_length', 4, u32(2048)),
    entry('llama.block_count', 4, u32(2)),
    entry('llama.embedding_length', 4, u32(64)),
    entry('llama.attention.head_count', 4, u32(4)),
    entry('llama.attention.head_count_kv', 4, u32(2)),
    entry('general.file_type', 10, u64(7)),
    // The vocabulary: an array of strings, and scores (float32): walked over, not kept.
    entry('tokenizer.ggml.tokens', 9, Buffer.concat([u32(8), u64(3), str('<s>'), str('a'), str('é')])),
    entry('tokenizer.ggml.scores', 9, Buffer.concat([u32(6), u64(3), Buffer.alloc(12)])),
    entry('tokenizer.chat_template', 8, str('{{ messages }}')),
    entry('general.flag', 7, Buffer.from([1])),
    ...extra,
  ]);

/** A source over a buffer that keeps the furthest byte asked of it. */
function bufferSource(data: Buffer): ByteSource & { furthest: number } {
  const source = {
    furthest: 0,
    async read(offset: number, length: number) {
      source.furthest = Math.max(source.furthest, offset + length);
      return data.subarray(offset, offset + length);
    },
  };
  return source;
}

describe('GGUF header, read with bounds', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('reads scalar metadata and walks over arrays', async () => {
    const meta = await readGgufMetadata(bufferSource(llama()));
    expect(Object.fromEntries(meta)).toEqual({
      'general.architecture': 'llama',
      'general.size_label': '25M',
      'llama.context_length': 2048,
      'llama.block_count': 2,
      'llama.embedding_length': 64,
      'llama.attention.head_count': 4,
      'llama.attention.head_count_kv': 2,
      'general.file_type': 7,
      'tokenizer.chat_template': '{{ messages }}',
      'general.flag': true,
    });
  });

  it('gives a file its shape (the memory estimate) from the same reader', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gguf-header-'));
    dirs.push(dir);
    const file = path.join(dir, 'm.gguf');
    await writeFile(file, Buffer.concat([llama(), Buffer.alloc(1000)]));
    expect(await ggufShape(file)).toMatchObject({ layers: 2, kvHeads: 2, headDim: 16, contextLength: 2048 });
    // A header that lies is no shape, and the file's size still counts as its weights.
    const liar = path.join(dir, 'liar.gguf');
    await writeFile(liar, header([entry('general.architecture', 8, Buffer.concat([u64(2n ** 40n), Buffer.from('llama')]))]));
    expect(await ggufShape(liar)).toMatchObject({ layers: null, contextLength: null });
    const source = await fileSource(file);
    try {
      expect((await readGgufMetadata(source)).get('llama.block_count')).toBe(2);
    } finally {
      await source.close();
    }
  });

  it.each([
    ['a string of 2^40 bytes', header([entry('general.architecture', 8, Buffer.concat([u64(2n ** 40n), Buffer.from('x')]))]), /claims 1099511627776 more bytes/],
    ['an array of 2^62 numbers', header([entry('tokenizer.ggml.scores', 9, Buffer.concat([u32(6), u64(2n ** 62n)]))]), /past the .*-byte limit/],
    ['an array of 2^63 strings', header([entry('tokenizer.ggml.tokens', 9, Buffer.concat([u32(8), u64(2n ** 63n)]))]), /ends inside its header/],
    ['2^63 - 1 metadata entries', header([entry('a', 4, u32(1))], 2n ** 63n - 1n), /ends inside its header/],
    ['arrays nested without end', header([entry('x', 9, Buffer.concat([u32(9), u64(1), u32(9), u64(1), u32(9), u64(1), u32(9), u64(1), u32(9), u64(1)]))]), /nested more than/],
    ['an unknown value type', header([entry('x', 99, u32(0))]), /unknown value type 99/],
    ['version 1', header([], 0, 1), /version 1 is not read/],
    ['a big-endian file', header([], 0, 0x03000000), /version 50331648/],
    ['not GGUF at all', Buffer.from('PK\u0003\u0004 a zip file'), /not a GGUF file/],
    ['a header cut short', llama().subarray(0, 100), /ends inside its header/],
  ])('refuses %s without reading or holding what it claims', async (_what, bytes, message) => {
    const source = bufferSource(bytes);
    await expect(readGgufMetadata(source, 1024 * 1024)).rejects.toThrow(message);
    await expect(readGgufMetadata(bufferSource(bytes), 1024 * 1024)).rejects.toBeInstanceOf(GgufHeaderError);
    expect(source.furthest).toBeLessThanOrEqual(1024 * 1024);
  });

  it('stops at the byte limit: a header larger than it is refused, not read to its end', async () => {
    const big = llama([entry('tokenizer.ggml.merges', 9, Buffer.concat([u32(8), u64(20_000), ...Array.from({ length: 20_000 }, () => str('a b c d e'))]))]);
    expect(big.length).toBeGreaterThan(300_000);
    const source = bufferSource(big);
    await expect(readGgufMetadata(source, 200_000)).rejects.toThrow(/ends inside its header|past the 200000-byte limit/);
    expect(source.furthest).toBeLessThanOrEqual(200_000);
    expect((await readGgufMetadata(bufferSource(big), 400_000)).get('general.flag')).toBe(true);
  });

  it('reads a shape up to the tokenizer\'s keys only: the vocabulary (megabytes) is never fetched', async () => {
    const vocabulary = (arch: string) => header([
      entry('general.architecture', 8, str(arch)),
      entry('qwen2.block_count', 4, u32(28)),
      entry('qwen2.attention.head_count', 4, u32(12)),
      entry('tokenizer.ggml.tokens', 9, Buffer.concat([u32(0), u64(3 * 1024 * 1024), Buffer.alloc(3 * 1024 * 1024)])),
      entry('qwen2.attention.head_count_kv', 4, u32(2)),
    ]);
    const source = bufferSource(vocabulary('qwen2'));
    const meta = await readGgufMetadata(source, undefined, ggufShapeKnown);
    expect(meta.get('qwen2.block_count')).toBe(28);
    expect(meta.has('qwen2.attention.head_count_kv')).toBe(false);
    expect(source.furthest).toBeLessThanOrEqual(1024 * 1024);
    // A file whose architecture's keys come after its tokenizer's is read on, to them.
    const late = bufferSource(vocabulary('llama'));
    await readGgufMetadata(late, undefined, ggufShapeKnown);
    expect(late.furthest).toBeGreaterThan(3 * 1024 * 1024);
  });
});
