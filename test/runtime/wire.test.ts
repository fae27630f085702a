import { describe, expect, it } from 'vitest';
import { MessageType, batchItems, decodeMessage, encodeMessage, protocolMismatch } from '../../src/runtime/wire.js';

describe('runtime wire format', () => {
  it('puts the type in byte 0 and a msgpack map after it', () => {
    const frame = encodeMessage(MessageType.CALL, { id: 7, method: 'infer', args: [[1, 2]], kwargs: { a: 'b' }, stream: false });
    expect(frame[0]).toBe(0x10);
    expect(decodeMessage(frame)).toEqual({ type: 0x10, body: { id: 7, method: 'infer', args: [[1, 2]], kwargs: { a: 'b' }, stream: false } });
  });

  it('carries binary data as bytes', () => {
    const { body } = decodeMessage(encodeMessage(MessageType.RESULT, { id: 1, value: new Uint8Array([0, 255, 1]) }));
    expect(Array.from(body.value as Uint8Array)).toEqual([0, 255, 1]);
  });

  it('rejects an empty frame and a body that is not a map', () => {
    expect(() => decodeMessage(Buffer.alloc(0))).toThrow(/empty/);
    expect(() => decodeMessage(Buffer.from([0x11, 0x93, 1, 2, 3]))).toThrow(/not a map/);
  });

  it('reads the messages of a BATCH and counts the items of another shape', () => {
    const { items, malformed } = batchItems({ items: [[MessageType.CHUNK, { id: 1, value: { text: 'a' } }], [MessageType.END, { id: 1 }], ['x', {}], [MessageType.END], [MessageType.END, [1]], 7] });
    expect(items).toEqual([
      { type: MessageType.CHUNK, body: { id: 1, value: { text: 'a' } } },
      { type: MessageType.END, body: { id: 1 } },
    ]);
    expect(malformed).toBe(4);
    expect(batchItems({ items: 'nope' })).toEqual({ items: [], malformed: 1 });
  });

  it('tells a version 1 or 2 runtime what to do', () => {
    expect(protocolMismatch(1)).toMatch(/speaks protocol 1, the control plane protocol 3\..*every token as its own message.*npm run setup/);
    expect(protocolMismatch(2)).toMatch(/speaks protocol 2, the control plane protocol 3\..*second thread.*npm run setup/);
    expect(protocolMismatch('x')).toMatch(/an unknown protocol/);
  });

  it('encodes the messages after a large one whole (the encoder is replaced past 4 MiB, its buffer with it)', () => {
    const big = 'x'.repeat(6 * 1024 * 1024);
    expect(decodeMessage(encodeMessage(MessageType.CALL, { id: 1, args: [big] })).body).toEqual({ id: 1, args: [big] });
    // The frames already handed out stay as they were; the next ones are whole.
    const first = encodeMessage(MessageType.CALL, { id: 2, args: ['a'] });
    const second = encodeMessage(MessageType.CALL, { id: 3, args: ['b'] });
    expect([decodeMessage(first).body, decodeMessage(second).body]).toEqual([{ id: 2, args: ['a'] }, { id: 3, args: ['b'] }]);
  });
});
