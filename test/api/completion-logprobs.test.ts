import { describe, expect, it } from 'vitest';
import { completionLogprobs } from '../../src/api/completions/stream-events.js';

describe("legacy completions' logprobs", () => {
  it("keep the chosen token in its place's map, whatever its spelling", () => {
    const entries = [
      { token: 'the', logprob: -0.5, top_logprobs: [{ token: 'a', logprob: -0.2 }] },
      // A token spelled like Object's prototype key is a key like any other.
      { token: '__proto__', logprob: -3, top_logprobs: [{ token: 'b', logprob: -0.1 }] },
      { token: 'c', logprob: -0.1, top_logprobs: [{ token: 'c', logprob: -0.1 }] },
    ];
    const out = completionLogprobs(entries) as { top_logprobs: Array<Record<string, number>> };
    expect(JSON.parse(JSON.stringify(out.top_logprobs))).toEqual([{ a: -0.2, the: -0.5 }, { b: -0.1, ['__proto__']: -3 }, { c: -0.1 }]);
    expect(Object.keys(out.top_logprobs[1]!)).toEqual(['b', '__proto__']);
  });
});
