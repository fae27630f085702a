import { describe, expect, it } from 'vitest';
import { TextOffsets } from '../../src/api/completions/text-offsets.js';

const offsets = (tokens: Array<string | number[]>): number[] => {
  const counter = new TextOffsets();
  return tokens.map((t) => (typeof t === 'string' ? counter.next(t, [...Buffer.from(t)]) : counter.next(`bytes:${t.map((b) => `\\x${b.toString(16)}`).join('')}`, t)));
};

describe('completions text_offset', () => {
  it('counts the text before each token in characters, whatever a byte token is spelt', () => {
    expect(offsets(['Once', ' upon', ' a'])).toEqual([0, 4, 9]);
    // The answer 'A rW\ufffd\ufffd)': two tokens of lone bytes, each a replacement character in the text
    // (their 10-character `bytes:\xNN` spelling put the next offsets at 14 and 24).
    expect(offsets(['A', ' r', 'W', [0x9b], [0xf2], ')'])).toEqual([0, 1, 3, 4, 5, 6]);
    // "é" split across two tokens; an emoji across four; a character after each.
    expect(offsets([[0xc3], [0xa9], 'x'])).toEqual([0, 1, 1]);
    expect(offsets([[0xf0], [0x9f], [0x98], [0x80], '!'])).toEqual([0, 1, 1, 1, 1]);
    // Code points, as Python clients index the text: an emoji is one.
    expect(offsets(['😀', 'a'])).toEqual([0, 1]);
  });

  it('counts a token without bytes by its text', () => {
    const counter = new TextOffsets();
    expect([counter.next('ab', null), counter.next('c', undefined), counter.next('d', null)]).toEqual([0, 2, 3]);
  });
});
