import { describe, expect, it } from 'vitest';
import { HangarError } from '../../src/errors/hangar-error.js';
import { suffixedUid, validateModelUid } from '../../src/supervisor/model-uid.js';

describe('model uids', () => {
  it.each(['a', 'qwen2.5-instruct', 'x'.repeat(100), 'üñí-código', '...', '.x', 'x..'])('accepts %s', (uid) => {
    expect(() => validateModelUid(uid)).not.toThrow();
  });

  it.each([
    ['', '1 to 100'],
    ['x'.repeat(101), 'it has 101'],
    ['a/b', '"/"'],
    ['a b', 'character code 32'],
    ['a\tb', 'character code 9'],
    ['a\u0000b', 'character code 0'],
    ['a\u0085b', 'character code 133'],
    ['a\ud800b', 'lone surrogate'],
    // Path segments every URL parser resolves away: the model could never be named again.
    ['.', 'must not be "."'],
    ['..', 'must not be ".."'],
    // Invisible formatting: a uid passing for another, or showing its text reversed.
    ['sim\u200b', 'U+200B'],
    ['\u202eexe.txt', 'U+202E'],
    ['a\u2066b', 'U+2066'],
  ])('refuses %j', (uid, why) => {
    try {
      validateModelUid(uid);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HangarError);
      expect((err as HangarError).status).toBe(400);
      expect((err as HangarError).param).toBe('model_uid');
      expect((err as HangarError).message).toContain(why);
    }
  });

  it('suffixes the name with 8 random letters or digits', () => {
    const a = suffixedUid('m');
    expect(a).toMatch(/^m-[A-Za-z0-9]{8}$/);
    expect(suffixedUid('m')).not.toBe(a);
  });
});
