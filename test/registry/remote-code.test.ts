import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { architectureFacts, transformersRefusal } from '../../src/registry/hub/remote-code.js';
import { TRANSFORMERS_MODEL_TYPES, TRANSFORMERS_VERSION } from '../../src/registry/hub/transformers-model-types.js';
import { venvPython } from '../integration/harness/server.js';

describe("what the Transformers engine can load, known from a checkpoint's config", () => {
  it('lists the model types of the transformers the runtime has (regenerate with scripts/transformers-model-types.py)', () => {
    const script = 'import json, transformers\nfrom transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES\nprint(json.dumps([transformers.__version__, sorted(CONFIG_MAPPING_NAMES)]))';
    const [version, names] = JSON.parse(execFileSync(venvPython, ['-c', script], { encoding: 'utf8' }).trim().split('\n').pop()!) as [string, string[]];
    expect(TRANSFORMERS_VERSION).toBe(version);
    expect([...TRANSFORMERS_MODEL_TYPES]).toEqual(names);
  }, 60_000);

  it('refuses an architecture transformers lacks: with the repo\'s own code only when trusted, without it never', () => {
    const known = architectureFacts({ model_type: 'qwen3', auto_map: { AutoModelForCausalLM: 'modeling_qwen.Qwen' } });
    // A known type loads with transformers' own code; its auto_map is ignored.
    expect(transformersRefusal(known, false)).toBeNull();
    const own = architectureFacts({ model_type: 'chatglm', auto_map: { AutoModel: 'modeling_chatglm.ChatGLMModel' } });
    expect(own).toEqual({ modelType: 'chatglm', ownCode: true });
    expect(transformersRefusal(own, false)).toMatchObject({ field: 'trust_remote_code', why: expect.stringMatching(/model_type chatglm\) is not in transformers .*trust_remote_code: true/) });
    expect(transformersRefusal(own, true)).toBeNull();
    const lacking = architectureFacts({ model_type: 'brand_new_arch', auto_map: {} });
    expect(transformersRefusal(lacking, true)).toMatchObject({ field: 'model_name', why: expect.stringContaining('brings no code for it') });
    // No model_type says nothing: the load decides.
    expect(transformersRefusal(architectureFacts({ auto_map: 'x' }), false)).toBeNull();
  });
});
