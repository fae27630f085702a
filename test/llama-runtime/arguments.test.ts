import { describe, expect, it } from 'vitest';
import { parseArguments } from '../../src/llama-runtime/arguments.js';

describe("the Node runtime's command line", () => {
  it('takes a replica uid that begins with "-" in the one-argument form the launcher writes', () => {
    for (const replica of ['-3+4-0', '--help-0', 'plain-0']) {
      expect(parseArguments(['--data', 'ipc:///tmp/d', '--control', 'ipc:///tmp/c', `--replica=${replica}`]).replica).toBe(replica);
    }
  });
});
