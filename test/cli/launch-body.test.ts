import { describe, expect, it } from 'vitest';
import { launchBody } from '../../src/cli/commands/launch.js';
import { engineKwargs } from '../../src/cli/engine-kwargs.js';

const base = { modelName: 'm', modelType: 'LLM', modelEngine: 'Transformers', replica: 1, nGpu: 'auto' };

describe('launch flags to the POST /v1/models body', () => {
  it('maps every flag to its contract field', () => {
    expect(
      launchBody({ ...base, modelUid: 'u', sizeInBillions: '0.5', modelFormat: 'pytorch', quantization: 'none', replica: 2, nGpu: 'none', gpuIdx: '0,1', modelPath: '/p', env: ['A', '1', 'B', '2'] }, []),
    ).toEqual({
      model_name: 'm', model_type: 'LLM', model_engine: 'Transformers', model_uid: 'u', model_size_in_billions: '0_5', model_format: 'pytorch',
      quantization: 'none', replica: 2, n_gpu: null, gpu_idx: [0, 1], model_path: '/p', envs: { A: '1', B: '2' },
    });
    expect(launchBody({ ...base, sizeInBillions: '7', nGpu: '2' }, [])).toMatchObject({ model_size_in_billions: 7, n_gpu: 2 });
    expect(launchBody({ ...base, loraModules: ['a', '/l/a', 'b', '/l/b'] }, [])).toMatchObject({
      peft_model_config: { lora_list: [{ lora_name: 'a', local_path: '/l/a' }, { lora_name: 'b', local_path: '/l/b' }] },
    });
    expect(() => launchBody({ ...base, loraModules: ['a'] }, [])).toThrow('--lora-modules takes a name and a path');
  });

  it('passes unknown --name value pairs to the engine, typed as Xinference reads them', () => {
    expect(engineKwargs(['--n-ctx', '512', '--trust-remote-code', 'true', '--device=cpu', '--x', 'none', '--ratio', '0.9'])).toEqual({
      n_ctx: 512, trust_remote_code: true, device: 'cpu', x: null, ratio: 0.9,
    });
    expect(launchBody(base, ['--request-limits', '3'])).toMatchObject({ request_limits: 3 });
  });

  it('refuses what cannot be sent, naming the flag', () => {
    expect(() => launchBody({ ...base, modelEngine: undefined }, [])).toThrow('--model-engine (-en) is required for LLM models');
    expect(() => launchBody({ ...base, modelType: 'embedding', modelEngine: undefined }, [])).not.toThrow();
    expect(() => launchBody({ ...base, nGpu: 'many' }, [])).toThrow('--n-gpu must be auto, none or a whole number');
    expect(() => launchBody({ ...base, gpuIdx: '0,x' }, [])).toThrow('--gpu-idx');
    expect(() => launchBody({ ...base, env: ['A'] }, [])).toThrow('--env takes a name and a value');
    expect(() => engineKwargs(['stray'])).toThrow('unexpected argument "stray"');
    expect(() => engineKwargs(['--n-ctx'])).toThrow('--n-ctx needs a value');
  });
});
