import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinCatalog } from '../../src/registry/builtin-catalog.js';
import { specsOf } from '../../src/registry/model-record.js';
import type { LlmRecord } from '../../src/registry/schemas/llm.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const python = path.join(repoRoot, 'python-runtime', '.venv', 'bin', 'python');

/** What each family's real prompt format looks like: its special tokens and the generation prompt. */
const FORMATS: Record<string, { bos: string; eos: string; generationPrompt: string }> = {
  'qwen2.5-instruct': { bos: '', eos: '<|im_end|>', generationPrompt: '<|im_start|>assistant\n' },
  'qwen2.5-coder-instruct': { bos: '', eos: '<|im_end|>', generationPrompt: '<|im_start|>assistant\n' },
  qwen3: { bos: '', eos: '<|im_end|>', generationPrompt: '<|im_start|>assistant\n' },
  'llama-3.1-instruct': { bos: '<|begin_of_text|>', eos: '<|eot_id|>', generationPrompt: '<|start_header_id|>assistant<|end_header_id|>\n\n' },
  'llama-3.2-instruct': { bos: '<|begin_of_text|>', eos: '<|eot_id|>', generationPrompt: '<|start_header_id|>assistant<|end_header_id|>\n\n' },
  'mistral-instruct-v0.3': { bos: '<s>', eos: '</s>', generationPrompt: '[/INST]' },
  'gemma-2-it': { bos: '<bos>', eos: '<eos>', generationPrompt: '<start_of_turn>model\n' },
  'phi-3-mini-4k-instruct': { bos: '<s>', eos: '<|endoftext|>', generationPrompt: '<|assistant|>\n' },
  'phi-3.5-mini-instruct': { bos: '<s>', eos: '<|endoftext|>', generationPrompt: '<|assistant|>\n' },
  'phi-4': { bos: '<|endoftext|>', eos: '<|im_end|>', generationPrompt: '<|im_start|>assistant<|im_sep|>' },
  // The R1 templates' current revision opens the reasoning in the prompt.
  'deepseek-r1-distill-qwen': { bos: '<｜begin▁of▁sentence｜>', eos: '<｜end▁of▁sentence｜>', generationPrompt: '<｜Assistant｜><think>\n' },
  'deepseek-r1-distill-llama': { bos: '<｜begin▁of▁sentence｜>', eos: '<｜end▁of▁sentence｜>', generationPrompt: '<｜Assistant｜><think>\n' },
};

const SYSTEM = 'You are a terse assistant.';
const USER_1 = 'First question: what is two plus two?';
const ASSISTANT_1 = 'Four.';
const USER_2 = 'Second question: and three plus three?';
const TOOL = {
  type: 'function',
  function: {
    name: 'get_current_weather',
    description: 'Get the current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** A Python script rendering every case with plain Jinja2, once with HF's block options and once without. */
const RENDER_SCRIPT = `
import json, sys
import jinja2
cases = json.load(open(sys.argv[1], encoding='utf-8'))
out = {}
for key, case in cases.items():
    try:
        rendered = []
        for options in ({}, {'trim_blocks': True, 'lstrip_blocks': True}):
            env = jinja2.Environment(**options)
            # transformers' own tojson (no HTML escaping), as apply_chat_template renders
            env.filters['tojson'] = lambda x, indent=None, separators=None, sort_keys=False: json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
            rendered.append(env.from_string(case['template']).render(**case['context']))
        out[key] = {'ok': True, 'text': rendered[0], 'hf': rendered[1], 'same': rendered[0] == rendered[1]}
    except Exception as e:
        out[key] = {'ok': False, 'error': type(e).__name__ + ': ' + str(e)}
sys.stdout.write(json.dumps(out))
`;

interface Rendered {
  ok: boolean;
  text?: string;
  /** With transformers' options (trim_blocks, lstrip_blocks): how apply_chat_template renders it. */
  hf?: string;
  same?: boolean;
  error?: string;
}

/**
 * The templates the models ship in their tokenizer_config.json, as Xinference's catalog
 * copies them (test/fixtures/shipped-chat-templates.json names the commit), for the
 * families whose template the catalog carries.
 */
const SHIPPED = JSON.parse(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'shipped-chat-templates.json'), 'utf8')) as { source: string; templates: Record<string, string> };
/**
 * Where our copy renders differently from the shipped one, and why. Qwen2.5-Coder: the
 * copy in Xinference's catalog writes the call example with doubled braces
 * (`{{"name": <function-name>, ...}}`); ours writes it as Qwen2.5-Instruct's does, and the
 * model repo's own file was not read here to say which the model ships.
 */
const KNOWN_DIFFERENCES = new Set(['qwen2.5-coder-instruct:tools']);

let llms: LlmRecord[];
let rendered: Record<string, Rendered>;

/** The text a case rendered to, failing with Jinja's error when it did not render. */
function renderedText(key: string): string {
  const result = rendered[key];
  expect(result, `${key} was not rendered`).toBeDefined();
  expect(result!.ok, `${key}: ${result!.error}`).toBe(true);
  expect(result!.same, `${key} renders differently with trim_blocks/lstrip_blocks`).toBe(true);
  return result!.text!;
}

let simulator: LlmRecord | undefined;

beforeAll(async () => {
  const catalog = await loadBuiltinCatalog();
  // The simulator family is a load-test token source (docs/simulator.md), not a
  // language model: it has no template or stop tokens; its own test is below.
  const all = [...catalog.LLM.values()] as LlmRecord[];
  simulator = all.find((r) => r.model_name === 'simulator');
  llms = all.filter((r) => r !== simulator);
  if (!existsSync(python)) throw new Error(`${python} is missing: run the setup script (npm run setup) first`);
  const cases: Record<string, { template: string; context: Record<string, unknown> }> = {};
  for (const record of llms) {
    if (record.chat_template === null) continue;
    const format = FORMATS[record.model_name] ?? { bos: '<s>', eos: '</s>', generationPrompt: '' };
    const messages = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER_1 },
      { role: 'assistant', content: ASSISTANT_1 },
      { role: 'user', content: USER_2 },
    ];
    const base = { messages, add_generation_prompt: true, bos_token: format.bos, eos_token: format.eos };
    const shipped = SHIPPED.templates[record.model_name];
    for (const [suffix, template] of [['', record.chat_template], [':shipped', shipped]] as const) {
      if (!template) continue;
      cases[`${record.model_name}${suffix}:chat`] = { template, context: base };
      if (record.model_ability.includes('tools')) cases[`${record.model_name}${suffix}:tools`] = { template, context: { ...base, tools: [TOOL] } };
    }
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-templates-'));
  try {
    const input = path.join(dir, 'cases.json');
    await writeFile(input, JSON.stringify(cases));
    const stdout = execFileSync(python, ['-c', RENDER_SCRIPT, input], { encoding: 'utf-8', maxBuffer: 64 * 1024 * 1024 });
    rendered = JSON.parse(stdout) as Record<string, Rendered>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

describe('built-in LLM families', () => {
  it('include the simulator, whose only spec is in the format only the simulator engine reads', () => {
    expect(simulator).toBeDefined();
    expect(simulator!.model_ability).toEqual(['chat', 'generate', 'tools']);
    expect(specsOf(simulator!).map((s) => s.model_format)).toEqual(['simulator']);
  });

  it('number at least 10, with the families the catalog promises', () => {
    expect(llms.length).toBeGreaterThanOrEqual(10);
    const names = llms.map((r) => r.model_name);
    for (const name of Object.keys(FORMATS)) expect(names, name).toContain(name);
  });

  // Xinference's tool_parser names (its llm_family.json); the engines parse qwen and llama3 (src/registry/tool-parsers.ts).
  const TOOL_PARSER_NAMES = /^(qwen|llama3|mistral|glm4|glm5|minimax|minimax_m3|gemma|gpt-oss|deepseek-r1|deepseek_v3|deepseek-v3\.1|deepseek-v3\.2)$/;

  it('have specs, integer stop token ids, a template only where the family overrides the model\'s own, and the keys their abilities need', () => {
    for (const record of llms) {
      const name = record.model_name;
      expect(specsOf(record).length, name).toBeGreaterThan(0);
      expect(record.context_length, name).toBeGreaterThan(0);
      expect(record.model_lang.length, name).toBeGreaterThan(0);
      // A chat family without a template copy uses the model's own (tokenizer config or GGUF metadata).
      if (record.chat_template !== null) expect(record.chat_template.length, name).toBeGreaterThan(0);
      for (const id of record.stop_token_ids) expect(Number.isInteger(id) && id >= 0, `${name} stop id ${id}`).toBe(true);
      if (record.tool_parser !== null) expect(record.tool_parser, name).toMatch(TOOL_PARSER_NAMES);
      // Reasoning tags come in pairs (gpt-oss's and Magistral's are not <think>).
      expect(record.reasoning_start_tag === null, name).toBe(record.reasoning_end_tag === null);
      for (const spec of specsOf(record)) {
        if (spec.model_hub === 'huggingface' || spec.model_hub === 'modelscope') expect(spec.model_id, `${name} ${spec.model_hub}`).toMatch(/^[\w.-]+\/[\w.-]+$/);
        if (spec.model_format === 'ggufv2') {
          // One file per quantization, or (only split files) the split template and its parts.
          const gguf = spec as { model_file_name_template?: string; model_file_name_split_template?: string; quantization_parts?: Record<string, string[]> };
          expect(gguf.model_file_name_template ?? gguf.model_file_name_split_template, `${name} ${spec.model_id}`).toMatch(/\.gguf$/);
          if (!gguf.model_file_name_template) expect(gguf.quantization_parts?.[spec.quantization]?.length, `${name} ${spec.quantization}`).toBeGreaterThan(0);
        }
      }
    }
  });

  it('count at least 80 LLM, 30 embedding and 12 rerank families (issue 40)', async () => {
    const catalog = await loadBuiltinCatalog();
    expect(llms.filter((r) => r.model_name !== 'simulator').length).toBeGreaterThanOrEqual(80);
    expect(catalog.embedding.size).toBeGreaterThanOrEqual(30);
    expect(catalog.rerank.size).toBeGreaterThanOrEqual(12);
    for (const name of ['Qwen3-Instruct', 'Qwen3-Thinking', 'Qwen3-Coder', 'Qwen3-VL-Instruct', 'Qwen3-Next-Instruct', 'gpt-oss', 'deepseek-r1', 'Deepseek-V3.1', 'llama-3.3-instruct', 'llama-4', 'gemma-3n', 'mistral-small-3.2-instruct', 'magistral-small', 'devstral-small', 'phi-4-mini-instruct', 'phi-4-reasoning', 'glm-4.5', 'smollm3', 'granite-4.0', 'olmo-3-instruct']) {
      expect(llms.some((r) => r.model_name === name), name).toBe(true);
    }
    // Mistral's native-layout repos have no chat template the engines can render: GGUF only (docs/catalog-sources.md).
    for (const name of ['mistral-small-3.2-instruct', 'magistral-small', 'devstral-small']) {
      const record = llms.find((r) => r.model_name === name)!;
      expect(specsOf(record).map((s) => s.model_format), name).toEqual(['ggufv2']);
      expect(record.model_ability, name).not.toContain('vision');
    }
    for (const name of ['Qwen3-Embedding-0.6B', 'bge-m3', 'embeddinggemma-300m']) expect(catalog.embedding.has(name), name).toBe(true);
    expect(catalog.rerank.has('Qwen3-Reranker-0.6B')).toBe(true);
  });

  it('launch 150 of Xinference\'s 162 LLM families by the same name, with the corrections docs/catalog-sources.md names', () => {
    const get = (name: string) => llms.find((r) => r.model_name === name);
    expect(llms.filter((r) => r.model_name !== 'simulator').length).toBeGreaterThanOrEqual(170);
    for (const name of ['qwen3.8', 'qwen3.8-max', 'glm-5.2', 'MiniMax-M3', 'Ling-3.0-flash', 'qwen2.5', 'qwen2.5-coder', 'llama-3', 'llama-2', 'Yi-chat', 'qwen1.5-chat', 'deepseek-coder-instruct', 'minicpm3-4b', 'QwQ-32B-Preview']) {
      expect(get(name), name).toBeDefined();
    }
    // Base families complete text and need no template.
    for (const name of ['qwen2.5', 'llama-3', 'gpt-2']) expect(get(name)!.model_ability, name).toEqual(['generate']);
    // Xinference gives moonlight size 3 (its active share); GLM-5's text-only architecture has no vision.
    expect(specsOf(get('moonlight-16b-a3b-instruct')!)[0]).toMatchObject({ model_size_in_billions: 16, activated_size_in_billions: 3 });
    for (const name of ['glm-5', 'glm-5.1']) expect(get(name)!.model_ability, name).not.toContain('vision');
    // Families whose checkpoints have no chat template are not listed (docs/catalog-sources.md).
    for (const name of ['qwen-chat', 'baichuan-2-chat', 'DeepSeek-V4-Pro']) expect(get(name), name).toBeUndefined();
  });

  it('keep the abilities and tool parsers of the families that have them', () => {
    const get = (name: string) => llms.find((r) => r.model_name === name)!;
    for (const [name, parser] of [
      ['qwen2.5-instruct', 'qwen'],
      ['qwen2.5-coder-instruct', 'qwen'],
      ['qwen3', 'qwen'],
      ['llama-3.1-instruct', 'llama3'],
      ['llama-3.2-instruct', 'llama3'],
      ['mistral-instruct-v0.3', 'mistral'],
    ] as const) {
      expect(get(name).model_ability, name).toContain('tools');
      expect(get(name).tool_parser, name).toBe(parser);
    }
    for (const name of ['qwen3', 'deepseek-r1-distill-qwen', 'deepseek-r1-distill-llama']) expect(get(name).model_ability, name).toContain('reasoning');
    // Vision families verified with images (issue 30): chat with images, real hub ids. The
    // newer vision families keep Xinference's abilities (docs/vision.md says which are verified).
    const vision = ['gemma-3-it', 'llava-1.5-hf', 'qwen2-vl-instruct', 'qwen2.5-vl-instruct'];
    expect(llms.filter((r) => r.model_ability.includes('vision')).map((r) => r.model_name)).toEqual(expect.arrayContaining(vision));
    for (const name of vision) {
      expect(get(name).model_ability, name).toEqual(['chat', 'vision']);
      expect(get(name).chat_template, name).toBeTruthy();
    }
    expect(get('qwen2.5-vl-instruct').model_specs.map((s: any) => s.model_id)).toContain('Qwen/Qwen2.5-VL-7B-Instruct');
    expect(get('qwen3')).toMatchObject({ stop_token_ids: [151643, 151644, 151645] });
    expect(get('llama-3.2-instruct')).toMatchObject({ stop_token_ids: [128001, 128008, 128009] });
    expect(get('mistral-instruct-v0.3')).toMatchObject({ stop_token_ids: [2], stop: ['</s>'] });
    expect(get('gemma-2-it').stop_token_ids).toEqual(expect.arrayContaining([1, 107]));
    expect(get('phi-3.5-mini-instruct').stop_token_ids).toEqual(expect.arrayContaining([32000, 32007]));
    expect(get('phi-4').stop_token_ids).toEqual(expect.arrayContaining([100257, 100265]));
    expect(get('deepseek-r1-distill-qwen')).toMatchObject({ stop_token_ids: [151643], stop: ['<｜end▁of▁sentence｜>'] });
    expect(get('deepseek-r1-distill-llama')).toMatchObject({ stop_token_ids: [128001], stop: ['<｜end▁of▁sentence｜>'] });
  });

  it('render their chat templates with Jinja2 into the model’s prompt format', () => {
    for (const record of llms) {
      if (record.chat_template === null) continue;
      const name = record.model_name;
      const text = renderedText(`${name}:chat`);
      expect(text, name).toContain(USER_1);
      expect(text, name).toContain(USER_2);
      expect(text, name).toContain(ASSISTANT_1);
      expect(text, name).toContain(SYSTEM);
      expect(text.indexOf(USER_1), name).toBeLessThan(text.indexOf(USER_2));
      const marker = FORMATS[name]?.generationPrompt;
      if (marker) expect(text.endsWith(marker), `${name} should end with ${JSON.stringify(marker)}:\n${text}`).toBe(true);
    }
  });

  it('put the tools into the prompt of the families that call tools', () => {
    for (const record of llms) {
      if (record.chat_template === null || !record.model_ability.includes('tools')) continue;
      const name = record.model_name;
      const text = renderedText(`${name}:tools`);
      expect(text, name).toContain('get_current_weather');
      expect(text, name).toContain(USER_2);
      const marker = FORMATS[name]?.generationPrompt;
      if (marker) expect(text.endsWith(marker), name).toBe(true);
    }
  });

  it('render their test conversations as the template the model ships does (where the catalog carries a copy)', () => {
    const compared = Object.keys(SHIPPED.templates).filter((name) => llms.some((r) => r.model_name === name && r.chat_template));
    expect(compared.length).toBeGreaterThanOrEqual(15);
    for (const name of compared) {
      for (const kind of ['chat', 'tools']) {
        const ours = rendered[`${name}:${kind}`];
        if (!ours) continue;
        const theirs = rendered[`${name}:shipped:${kind}`];
        expect(theirs?.ok, `${name}:shipped:${kind}: ${theirs?.error}`).toBe(true);
        if (KNOWN_DIFFERENCES.has(`${name}:${kind}`)) expect(ours.hf, `${name}:${kind} no longer differs: drop it from KNOWN_DIFFERENCES`).not.toBe(theirs!.hf);
        else expect(ours.hf, `${name}:${kind}`).toBe(theirs!.hf);
      }
    }
  });

  it('render the exact prompts of a few families', () => {
    const text = (name: string) => renderedText(`${name}:chat`);
    expect(text('qwen2.5-instruct')).toBe(
      `<|im_start|>system\n${SYSTEM}<|im_end|>\n<|im_start|>user\n${USER_1}<|im_end|>\n<|im_start|>assistant\n${ASSISTANT_1}<|im_end|>\n` +
        `<|im_start|>user\n${USER_2}<|im_end|>\n<|im_start|>assistant\n`,
    );
    expect(text('llama-3.1-instruct')).toBe(
      `<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n${SYSTEM}<|eot_id|>` +
        `<|start_header_id|>user<|end_header_id|>\n\n${USER_1}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n${ASSISTANT_1}<|eot_id|>` +
        `<|start_header_id|>user<|end_header_id|>\n\n${USER_2}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n`,
    );
    expect(text('mistral-instruct-v0.3')).toBe(`<s>[INST] ${USER_1}[/INST] ${ASSISTANT_1}</s>[INST] ${SYSTEM}\n\n${USER_2}[/INST]`);
    expect(text('gemma-2-it')).toBe(
      `<bos><start_of_turn>user\n${SYSTEM}\n\n${USER_1}<end_of_turn>\n<start_of_turn>model\n${ASSISTANT_1}<end_of_turn>\n` +
        `<start_of_turn>user\n${USER_2}<end_of_turn>\n<start_of_turn>model\n`,
    );
    expect(text('phi-4')).toBe(
      `<|im_start|>system<|im_sep|>${SYSTEM}<|im_end|><|im_start|>user<|im_sep|>${USER_1}<|im_end|>` +
        `<|im_start|>assistant<|im_sep|>${ASSISTANT_1}<|im_end|><|im_start|>user<|im_sep|>${USER_2}<|im_end|><|im_start|>assistant<|im_sep|>`,
    );
    expect(text('deepseek-r1-distill-qwen')).toBe(
      `<｜begin▁of▁sentence｜>${SYSTEM}<｜User｜>${USER_1}<｜Assistant｜>${ASSISTANT_1}<｜end▁of▁sentence｜><｜User｜>${USER_2}<｜Assistant｜><think>\n`,
    );
  });
});
