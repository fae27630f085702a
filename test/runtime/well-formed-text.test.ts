import { describe, expect, it } from 'vitest';
import { wellFormed } from '../../src/runtime/well-formed-text.js';
import { MessageType, encodeMessage } from '../../src/runtime/wire.js';

/** Whether the bytes hold a UTF-16 surrogate encoded as if it were a code point (ED A0..BF xx): invalid UTF-8, which Python refuses. */
const encodesSurrogate = (bytes: Buffer): boolean => bytes.some((b, i) => b === 0xed && (bytes[i + 1] ?? 0) >= 0xa0);

describe('text bound for a runtime is well formed', () => {
  it('replaces each lone surrogate with U+FFFD, and leaves pairs and other text alone', () => {
    expect(wellFormed('cut \ud83d')).toBe('cut \ufffd');
    expect(wellFormed('\udc00 low first')).toBe('\ufffd low first');
    expect(wellFormed('pair \ud83d\ude00 kept')).toBe('pair \ud83d\ude00 kept');
    expect(wellFormed('two \ud800\ud800')).toBe('two \ufffd\ufffd');
  });

  it('reaches strings in arrays, nested objects and keys, copying only what changes', () => {
    const clean = { args: [[{ role: 'user', content: 'hi' }]], kwargs: { generate_config: { stop: ['x'] } }, bytes: new Uint8Array([0xed]) };
    expect(wellFormed(clean)).toBe(clean);
    const dirty = { id: 3, args: [[{ role: 'user', content: 'hi \ud83d' }], 'ok'], kwargs: { ['k\udfff']: ['\ud800'] }, n: null };
    const fixed = wellFormed(dirty);
    expect(fixed).toEqual({ id: 3, args: [[{ role: 'user', content: 'hi \ufffd' }], 'ok'], kwargs: { 'k\ufffd': ['\ufffd'] }, n: null });
    expect(dirty.args[0]).toEqual([{ role: 'user', content: 'hi \ud83d' }]); // the request's own object is untouched
    expect(fixed.args[1]).toBe('ok');
  });

  it('makes every CALL frame valid UTF-8, short strings and long ones alike', () => {
    for (const text of ['\ud83d', `${'a'.repeat(500)}\ud83d`, `x\udc00y`]) {
      const frame = encodeMessage(MessageType.CALL, { id: 1, method: 'create_embedding', args: [text], kwargs: {}, stream: false });
      expect(encodesSurrogate(frame)).toBe(false);
      expect(frame.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(true);
    }
  });
});
