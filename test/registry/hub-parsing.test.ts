import { describe, expect, it } from 'vitest';
import { ggufQuantizations, pickQuantization } from '../../src/registry/hub/gguf-files.js';
import { parseHubId, registrationName } from '../../src/registry/hub/hub-id.js';
import { validateModelUid } from '../../src/supervisor/model-uid.js';
import { templateAbilities } from '../../src/registry/hub/template-abilities.js';

describe('hub ids in a launch', () => {
  it('reads hf.co, huggingface.co, URLs and bare ids, with and without a tag', () => {
    expect(parseHubId('hf.co/bartowski/Qwen_Qwen3-4B-GGUF:Q4_K_M')).toEqual({ repo: 'bartowski/Qwen_Qwen3-4B-GGUF', tag: 'Q4_K_M', hub: 'huggingface' });
    expect(parseHubId('https://huggingface.co/Qwen/Qwen3-8B')).toEqual({ repo: 'Qwen/Qwen3-8B', tag: null, hub: 'huggingface' });
    expect(parseHubId('Qwen/Qwen2.5-0.5B-Instruct')).toEqual({ repo: 'Qwen/Qwen2.5-0.5B-Instruct', tag: null, hub: null });
    expect(parseHubId('qwen2.5-instruct')).toBeNull();
    expect(registrationName(parseHubId('hf.co/unsloth/gpt-oss-20b-GGUF:F16')!)).toBe('unsloth--gpt-oss-20b-GGUF');
  });

  it("names a repo past a registration's 100 characters by its start and a hash of the whole, one name per repo", () => {
    const long = (repo: string) => registrationName(parseHubId(`hf.co/${'o'.repeat(50)}/${repo}`)!);
    const a = long(`${'r'.repeat(59)}a`);
    const b = long(`${'r'.repeat(59)}b`);
    expect(a).toHaveLength(100);
    expect(a).toMatch(/^o{50}--r{39}-[0-9a-f]{8}$/);
    expect(b).not.toBe(a);
    expect(long(`${'r'.repeat(59)}a`)).toBe(a);
    // Also the launch's uid by default.
    expect(() => validateModelUid(a)).not.toThrow();
  });

  it.each(['hf.co/a/b/c', 'hf.co/onlyone', 'hf.co/a/b:', '../etc/passwd', 'a/..', 'a/-b', 'a/b c', 'a--b/c'])('refuses %s with a 400 naming model_name', (name) => {
    expect(() => parseHubId(name)).toThrow(expect.objectContaining({ status: 400, param: 'model_name' }));
  });
});

describe('GGUF quantizations from file names', () => {
  const files = [
    { path: 'README.md', size: 10 },
    { path: 'Qwen3-4B-IQ4_XS.gguf', size: 100 },
    { path: 'Qwen3-4B-Q4_K_M.gguf', size: 110 },
    { path: 'Qwen3-4B-Q8_0.gguf', size: 200 },
    { path: 'mmproj-Qwen3-4B-f16.gguf', size: 50 },
    { path: 'Q6_K/Qwen3-4B-Q6_K-00002-of-00002.gguf', size: 70 },
    { path: 'Q6_K/Qwen3-4B-Q6_K-00001-of-00002.gguf', size: 80 },
    { path: 'Qwen3-4B.imatrix.gguf', size: 5 },
    { path: '../../outside-Q2_K.gguf', size: 5 },
    { path: '/etc/abs-Q3_K_M.gguf', size: 5 },
  ];

  it('groups split parts, leaves projectors and imatrix files out', () => {
    const offered = ggufQuantizations(files);
    expect(offered.map((q) => q.quantization)).toEqual(['IQ4_XS', 'Q4_K_M', 'Q8_0', 'Q6_K']);
    const split = offered.find((q) => q.quantization === 'Q6_K')!;
    expect(split.files).toEqual(['Q6_K/Qwen3-4B-Q6_K-00001-of-00002.gguf', 'Q6_K/Qwen3-4B-Q6_K-00002-of-00002.gguf']);
    expect(split.bytes).toBe(150);
    expect(split.split).toEqual({ template: 'Q6_K/Qwen3-4B-Q6_K-{part}.gguf', parts: ['00001-of-00002', '00002-of-00002'] });
  });

  it('picks by tag case-insensitively or by file name; Q4_K_M, else a Q4, else the first without one', () => {
    const offered = ggufQuantizations(files);
    expect(pickQuantization(offered, 'q8_0', 'r').quantization).toBe('Q8_0');
    expect(pickQuantization(offered, 'Qwen3-4B-IQ4_XS.gguf', 'r').quantization).toBe('IQ4_XS');
    expect(pickQuantization(offered, null, 'r').quantization).toBe('Q4_K_M');
    expect(pickQuantization(offered.filter((q) => q.quantization !== 'Q4_K_M'), null, 'r').quantization).toBe('IQ4_XS');
    expect(pickQuantization(ggufQuantizations([{ path: 'm-Q4_0.gguf', size: 1 }, { path: 'm-Q8_0.gguf', size: 1 }]).reverse(), null, 'r').quantization).toBe('Q4_0');
    // No 4-bit one: Q8_0 before F16 (the first by name was the largest file there is), then the smallest.
    expect(pickQuantization(ggufQuantizations([{ path: 'm-f16.gguf', size: 2 }, { path: 'm-Q8_0.gguf', size: 1 }]), null, 'r').quantization).toBe('Q8_0');
    expect(pickQuantization(ggufQuantizations([{ path: 'm-BF16.gguf', size: 16 }, { path: 'm-Q6_K.gguf', size: 6 }]), null, 'r').quantization).toBe('Q6_K');
    // llama.cpp's dropped ARM repacks are no default.
    expect(pickQuantization(ggufQuantizations([{ path: 'm-Q4_0_4_8.gguf', size: 1 }, { path: 'm-Q4_0.gguf', size: 1 }]), null, 'r').quantization).toBe('Q4_0');
    // Ollama's `:latest` is no tag; unsloth's dynamic quantizations by their full name, or without `UD-`.
    expect(pickQuantization(offered, 'latest', 'r').quantization).toBe('Q4_K_M');
    const unsloth = ggufQuantizations([{ path: 'M-UD-Q4_K_XL.gguf', size: 1 }, { path: 'M-Q8_0.gguf', size: 2 }]);
    expect(unsloth.map((q) => q.quantization)).toEqual(['UD-Q4_K_XL', 'Q8_0']);
    expect(pickQuantization(unsloth, 'UD-Q4_K_XL', 'r').quantization).toBe('UD-Q4_K_XL');
    expect(pickQuantization(unsloth, 'q4_k_xl', 'r').quantization).toBe('UD-Q4_K_XL');
    expect(pickQuantization(unsloth, null, 'r').quantization).toBe('UD-Q4_K_XL');
    expect(() => pickQuantization(offered, 'Q2_K', 'org/repo')).toThrow(/org\/repo has no GGUF file for Q2_K; it offers IQ4_XS, Q4_K_M, Q8_0, Q6_K/);
    // Two files of one quantization: which is meant is the caller's to say (one was taken silently).
    const two = ggufQuantizations([{ path: 'Tiny-Instruct-Q4_K_M.gguf', size: 1 }, { path: 'Tiny-Q4_K_M.gguf', size: 1 }]);
    expect(() => pickQuantization(two, 'Q4_K_M', 'org/repo')).toThrow(/has 2 files of Q4_K_M \(Tiny-Instruct-Q4_K_M.gguf, Tiny-Q4_K_M.gguf\); name the one to launch/);
    expect(pickQuantization(two, 'Tiny-Q4_K_M.gguf', 'org/repo').files).toEqual(['Tiny-Q4_K_M.gguf']);
    // Each of the two by its own file name, the first one's too (the search offers it so).
    expect(pickQuantization(two, 'Tiny-Instruct-Q4_K_M.gguf', 'org/repo').files).toEqual(['Tiny-Instruct-Q4_K_M.gguf']);
    expect(ggufQuantizations([{ path: 'M-UD-TQ1_0.gguf', size: 1 }]).map((q) => q.quantization)).toEqual(['UD-TQ1_0']);
    // A split quantization in its folder beside a single file of the same one keeps all its parts.
    const mixed = ggufQuantizations([{ path: 'L-Q4_K_M.gguf', size: 1 }, { path: 'Q4_K_M/L-Q4_K_M-00001-of-00002.gguf', size: 2 }, { path: 'Q4_K_M/L-Q4_K_M-00002-of-00002.gguf', size: 3 }]);
    expect(mixed.find((q) => q.split)?.files).toEqual(['Q4_K_M/L-Q4_K_M-00001-of-00002.gguf', 'Q4_K_M/L-Q4_K_M-00002-of-00002.gguf']);
  });
});

describe('abilities read from a chat template', () => {
  it('knows Hermes/Qwen and Llama 3 tool formats, thinking tags and the thinking switch', () => {
    const qwen3 = "{%- if tools %}<tools>{{ tools }}</tools> <tool_call>{%- endif %}{%- if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>{%- endif %}";
    expect(templateAbilities(qwen3)).toEqual({ tool_parser: 'qwen', tools: true, reasoning: { start: '<think>', end: '</think>' }, hybrid: true });
    const llama = "{%- if tools is not none %}Given the following functions, please respond with a JSON for a function call{%- endif %}<|python_tag|>";
    expect(templateAbilities(llama)).toMatchObject({ tool_parser: 'llama3', tools: true, reasoning: null });
    // A format the engines do not parse yet is recorded, not claimed.
    expect(templateAbilities('{% if tools %}[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS]{% endif %}[TOOL_CALLS]')).toMatchObject({ tool_parser: 'mistral', tools: true });
    expect(templateAbilities('{% if tools %}<|channel|>commentary<|call|>{% endif %}')).toMatchObject({ tool_parser: 'gpt-oss', tools: true });
    expect(templateAbilities('{{ messages }}<tool_call>')).toMatchObject({ tool_parser: null, tools: false });
    // <tool_call> around XML, not JSON: not read as Hermes.
    expect(templateAbilities('{% if tools %}<tool_call>\n<function=name>\n<parameter=x>1</parameter></function></tool_call>{% endif %}')).toMatchObject({ tool_parser: 'qwen3_coder', tools: false });
    expect(templateAbilities('{% if tools %}<tool_call>{{ name }}<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>{% endif %}')).toMatchObject({ tool_parser: 'glm4', tools: false });
    expect(templateAbilities(null).tools).toBe(false);
  });
});
