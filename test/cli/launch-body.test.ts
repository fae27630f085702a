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

  it('reads {...} and [...] as JSON as Xinference does, and refuses its own parameters given as engine arguments', () => {
    expect(engineKwargs(['--compilation_config', '{"mode": 3}', '--stops', '["a", "b"]', '--half', '{not json'])).toEqual({
      compilation_config: { mode: 3 }, stops: ['a', 'b'], half: '{not json',
    });
    // Silently overwritten by the flag's default before: n_gpu "auto", model_type "LLM".
    expect(() => launchBody(base, ['--n_gpu', '1'])).toThrow('--n_gpu is a launch option of its own, not an engine argument: use --n-gpu');
    expect(() => launchBody(base, ['--model_type', 'embedding'])).toThrow('use -t/--model-type');
    expect(() => launchBody({ ...base, modelEngine: undefined }, ['--model_engine', 'vllm'])).toThrow('use -en/--model-engine');
    // --model_path is Xinference's old spelling of -mp: taken, but not beside -mp.
    expect(launchBody(base, ['--model_path', '/old'])).toMatchObject({ model_path: '/old' });
    expect(() => launchBody({ ...base, modelPath: '/new' }, ['--model_path', '/old'])).toThrow('Cannot set both --model-path and --model_path');
    // Keyword arguments in Xinference (enable_thinking, keep_alive): refused only beside their flag.
    expect(launchBody(base, ['--enable_thinking', 'false'])).toMatchObject({ enable_thinking: false });
    expect(() => launchBody({ ...base, keepAlive: '5m' }, ['--keep_alive', '10'])).toThrow('--keep_alive and the flag that sets keep_alive are both given');
  });
});

describe("the rest of Xinference's launch flags, and numbers read as typed", () => {
  it('sends -qc, -ld, -fd pairs, --n-worker, --enable-thinking and the virtual-env flags as Xinference\'s CLI does', () => {
    expect(
      launchBody(
        {
          ...base,
          quantizationConfig: ['load_in_4bit', 'true', 'bnb_4bit_quant_type', 'nf4'],
          imageLoraLoadKwargs: ['low_cpu_mem_usage', 'true'],
          imageLoraFuseKwargs: ['lora_scale', '0.7'],
          nWorker: 2,
          enableThinking: true,
          disableVirtualEnv: true,
          virtualEnvPackage: ['numpy', 'scipy'],
          virtualEnvFindLink: ['/wheels'],
        },
        [],
      ),
    ).toMatchObject({
      quantization_config: { load_in_4bit: true, bnb_4bit_quant_type: 'nf4' },
      peft_model_config: { lora_list: [], image_lora_load_kwargs: { low_cpu_mem_usage: true }, image_lora_fuse_kwargs: { lora_scale: 0.7 } },
      n_worker: 2,
      enable_thinking: true,
      enable_virtual_env: false,
      virtual_env_packages: ['numpy', 'scipy'],
      virtual_env_find_links: ['/wheels'],
    });
    expect(launchBody({ ...base, enableVirtualEnv: true }, [])).toMatchObject({ enable_virtual_env: true });
    expect(() => launchBody({ ...base, enableVirtualEnv: true, disableVirtualEnv: true }, [])).toThrow('contradict');
    expect(() => launchBody({ ...base, quantizationConfig: ['load_in_4bit'] }, [])).toThrow('--quantization-config takes a name and a value');
  });

  it('spells fractional sizes as the catalog does, and refuses empty GPU numbers', () => {
    for (const [given, sent] of [['.5', '0_5'], ['0.5', '0_5'], ['0_5', '0_5'], ['1.50', '1_5'], ['7', 7], ['7.0', 7]] as const) {
      expect(launchBody({ ...base, sizeInBillions: given }, []).model_size_in_billions, given).toBe(sent);
    }
    for (const bad of ['0', '-1', 'abc', '1e3', '']) expect(() => launchBody({ ...base, sizeInBillions: bad || ' ' }, []), bad).toThrow('--size-in-billions');
    for (const bad of ['0,,1', '1,', ',', ' ', '0x1']) expect(() => launchBody({ ...base, gpuIdx: bad }, []), bad).toThrow('--gpu-idx');
    for (const bad of ['', '0x2', '1.5']) expect(() => launchBody({ ...base, nGpu: bad }, []), bad).toThrow('--n-gpu');
  });

  it('reads engine argument numbers JSON can carry, and leaves the others as text for the server to name', () => {
    expect(engineKwargs(['--top-p', '.5', '--x', '-2', '--y', '1e3', '--z', '+3'])).toEqual({ top_p: 0.5, x: -2, y: 1000, z: 3 });
    expect(engineKwargs(['--a', '1e400', '--seed', '12345678901234567890', '--h', '0x10'])).toEqual({ a: '1e400', seed: '12345678901234567890', h: '0x10' });
  });
});
