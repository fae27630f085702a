import { describe, expect, it } from 'vitest';
import { parseRows } from '../../src/runtime/gpu-memory.js';

describe("nvidia-smi's csv rows", () => {
  it('reads index or pid to MiB as bytes, summing repeats and skipping what is not a row', () => {
    // `--query-gpu=index,memory.total` and `--query-compute-apps=pid,used_memory`, noheader, nounits.
    expect(parseRows('0, 81559\n1, 81559\n')).toEqual({ 0: 81559 * 2 ** 20, 1: 81559 * 2 ** 20 });
    expect(parseRows('4242, 1024\n4242, 512\n77, [N/A]\n\nNo running processes found\n')).toEqual({ 4242: 1536 * 2 ** 20 });
  });
});
