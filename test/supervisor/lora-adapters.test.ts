import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { checkLoraAdapters } from '../../src/supervisor/lora-adapters.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';

const launch = (names: string[]): LaunchRequest => ({
  model_name: 'tiny', model_type: 'LLM', model_engine: 'Transformers', replica: 1, n_gpu: null, envs: {}, engine_kwargs: {},
  // The first adapter's folder is there; the others' are not.
  peft_model_config: { lora_list: names.map((lora_name, i) => ({ lora_name, local_path: i === 0 && names.length > 1 ? tmpdir() : '/nonexistent/adapter' })) },
} as LaunchRequest);

describe('LoRA adapter names at launch', () => {
  it('takes a name peft and a model id can carry, and refuses the rest by its place before any path is looked at', () => {
    // Names that pass get as far as their (missing) folder.
    for (const name of ['a', 'my-lora_1', 'x'.repeat(64)]) expect(() => checkLoraAdapters(launch([name]), 'transformers'), name).toThrow(/does not exist/);
    for (const name of ['../../x', 'v1.2', 'a/b', ' ', '', 'x'.repeat(65), 'é']) {
      expect(() => checkLoraAdapters(launch(['ok', name]), 'transformers'), name).toThrow(
        expect.objectContaining({ param: 'peft_model_config.lora_list.1.lora_name', message: expect.stringContaining('must be 1 to 64 letters, digits, "_" or "-"') }),
      );
    }
  });
});
