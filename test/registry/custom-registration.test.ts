import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/registry/registry.js';
import type { HangarError } from '../../src/errors/hangar-error.js';
import { expectHangarError, openRegistry, RecordingLogger, tempHome } from './fixtures.js';

let home: string;
let cleanup: () => Promise<void>;
let registry: Registry;
let weights: string;

beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
  ({ registry } = await openRegistry(home));
  weights = path.join(home, 'weights');
  await mkdir(weights);
  await writeFile(path.join(weights, 'model.joblib'), 'not really a model');
});
afterEach(() => cleanup());

const llmDefinition = (overrides: Record<string, unknown> = {}) => ({
  version: 2,
  model_name: 'my-llm',
  model_lang: ['en'],
  model_ability: ['chat'],
  model_family: 'qwen2.5-instruct',
  model_specs: [{ model_format: 'pytorch', model_size_in_billions: '0_5', quantization: 'none', model_uri: weights }],
  ...overrides,
});
const flexible = (overrides: Record<string, unknown> = {}) => ({
  model_name: 'my-clf',
  model_uri: path.join(weights, 'model.joblib'),
  launcher: 'sklearn',
  ...overrides,
});
const folder = (type: string) => path.join(home, 'model', 'v2', type);

describe('register', () => {
  it('takes the definition as a JSON string (Xinference) or an object (ours)', async () => {
    await registry.register('flexible', { model: JSON.stringify(flexible()) }, false);
    await registry.register('flexible', { model: flexible({ model_name: 'as-object' }) }, false);
    expect((await registry.list('flexible')).map((i) => i.model_name)).toEqual(['as-object', 'my-clf']);
  });

  it("takes Xinference's own documented templates as they are: null stop words, and null image abilities", async () => {
    // doc/source/models/custom.rst's LLM template, model_uri pointed at a folder here.
    const llm = {
      version: 2, context_length: 32768, model_name: 'custom-qwen-2.5', model_lang: ['en', 'zh'], model_ability: ['generate'],
      model_description: 'This is a custom model description.', model_family: 'my-custom-qwen-2.5',
      model_specs: [{ model_format: 'pytorch', model_size_in_billions: '0_5', quantization: 'none', model_id: null, model_hub: 'huggingface', model_uri: pathToFileURL(weights).href, model_revision: null, activated_size_in_billions: null }],
      chat_template: null, stop_token_ids: null, stop: null, reasoning_start_tag: null, reasoning_end_tag: null, cache_config: null,
      virtualenv: { packages: [], inherit_pip_config: true, index_url: null, extra_index_url: null, find_links: null, trusted_host: null, no_build_isolation: null },
      is_builtin: false,
    };
    await registry.register('LLM', { model: JSON.stringify(llm) }, false);
    expect(registry.get('LLM', 'custom-qwen-2.5')).toMatchObject({ stop_token_ids: [], stop: [] });
    // A null with a known family takes the family's, as an absent field does.
    await registry.register('LLM', { model: llmDefinition({ stop_token_ids: null, stop: null }) }, false);
    expect(registry.get('LLM', 'my-llm')).toMatchObject({ stop_token_ids: [151643, 151644, 151645] });
    const image = { model_name: 'my-qwen-image', model_id: null, model_revision: null, model_hub: 'huggingface', version: 2, model_family: 'stable_diffusion', model_ability: null, controlnet: [], default_model_config: {}, default_generate_config: {}, model_uri: pathToFileURL(weights).href, is_builtin: false };
    await registry.register('image', { model: JSON.stringify(image) }, false);
    expect(registry.get('image', 'my-qwen-image')).toMatchObject({ model_ability: ['text2image'] });
  });

  it("refuses GGUF file names that leave the repository, naming the spec's field", async () => {
    const gguf = (extra: Record<string, unknown>) => llmDefinition({ model_specs: [{ model_format: 'ggufv2', model_size_in_billions: 1, quantization: 'q8_0', model_uri: weights, ...extra }] });
    for (const [extra, field] of [
      [{ model_file_name_template: '../../../../etc/{quantization}.gguf' }, 'model_specs.0.model_file_name_template'],
      [{ model_file_name_template: '/etc/passwd' }, 'model_specs.0.model_file_name_template'],
      [{ model_file_name_split_template: 'a\\..\\b-{part}.gguf' }, 'model_specs.0.model_file_name_split_template'],
      [{ quantization_parts: { q8_0: ['../../../a'] } }, 'model_specs.0.quantization_parts.q8_0.0'],
    ] as const) {
      const err = await expectHangarError(() => registry.register('LLM', { model: gguf(extra) }, false), 'invalid_registration', 400);
      expect(err.param, JSON.stringify(extra)).toBe(field);
    }
    // Xinference's own shapes pass: a folder in the template, split parts, an empty template.
    await registry.register('LLM', { model: gguf({ model_file_name_template: 'BF16/QwQ-32B-{quantization}.gguf', model_file_name_split_template: 'BF16/QwQ-32B-{quantization}-{part}.gguf', quantization_parts: { q8_0: ['00001-of-00002', '00002-of-00002'] } }) }, false);
    await registry.register('LLM', { model: { ...gguf({ model_file_name_template: '' }), model_name: 'empty-template' } }, false);
  });

  it('refuses a definition sent as a string that nests deeper than a body may, keeping nothing', async () => {
    // 6 kB of this was kept, written as an 18 MB file, and every detailed listing then overflowed the stack.
    const deep = JSON.stringify({ ...flexible(), extra: JSON.parse('['.repeat(3000) + ']'.repeat(3000)) });
    const err = await expectHangarError(() => registry.register('flexible', { model: deep }, true), 'invalid_registration', 400);
    expect(err.message).toContain('model: is nested deeper than 64 levels');
    expect(err.param).toBe('model');
    expect(await readdir(folder('flexible')).catch(() => [])).toEqual([]);
    expect(await registry.list('flexible', { detailed: true })).toEqual([]);
  });

  it('gives a chat LLM without chat_template its family template and stop words', async () => {
    await registry.register('LLM', { model: JSON.stringify(llmDefinition()) }, false);
    const family = registry.get('LLM', 'qwen2.5-instruct') as { chat_template: string };
    expect(registry.get('LLM', 'my-llm')).toMatchObject({
      chat_template: family.chat_template,
      stop_token_ids: [151643, 151644, 151645],
      model_family: 'qwen2.5-instruct',
    });
  });

  it('keeps a chat_template given as Jinja text', async () => {
    await registry.register('LLM', { model: llmDefinition({ chat_template: '{{ messages[0].content }}' }) }, false);
    expect(registry.get('LLM', 'my-llm')).toMatchObject({ chat_template: '{{ messages[0].content }}' });
  });

  it('normalises Xinference launcher paths and launcher_args strings', async () => {
    await registry.register(
      'flexible',
      { model: flexible({ launcher: 'xinference.model.flexible.launchers.transformers', launcher_args: '{"task": "text-classification"}' }) },
      false,
    );
    expect(registry.get('flexible', 'my-clf')).toMatchObject({ launcher: 'transformers', launcher_args: '{"task":"text-classification"}' });
  });

  it('accepts a file:// URI', async () => {
    await registry.register('flexible', { model: flexible({ model_uri: pathToFileURL(path.join(weights, 'model.joblib')).href }) }, false);
    expect(registry.resolve({ model_type: 'flexible', model_name: 'my-clf' }).load.model_uri).toBe(path.join(weights, 'model.joblib'));
  });
});

describe('register: every refusal names the field', () => {
  it('unsupported type', async () => {
    const err = await expectHangarError(() => registry.register('hologram', { model: flexible() }, false), 'unsupported_model_type', 400);
    expect(err.message).toContain('hologram');
  });

  it('missing model', async () => {
    const err = await expectHangarError(() => registry.register('flexible', {}, false), 'invalid_registration', 400);
    expect(err.param).toBe('model');
  });

  it('model that is not JSON', async () => {
    const err = await expectHangarError(() => registry.register('flexible', { model: '{oops' }, false), 'invalid_registration', 400);
    expect(err.message).toMatch(/^Invalid model definition: model: is not valid JSON/);
  });

  it.each(['bad/name', 'a b', 'x+y', 'q?', 'p%', 'h#', 'a&b', 'k=v', 'nul\u0000byte', 'bell\u0007', 'del\u007f'])('name %j', async (name) => {
    const err = await expectHangarError(() => registry.register('flexible', { model: flexible({ model_name: name }) }, false), 'invalid_model_name', 400);
    expect(err.message).toContain(name);
    expect(err.param).toBe('model_name');
  });

  it.each([
    ['x'.repeat(101), 'at most 100 characters'],
    ['.', 'must not start with "."'],
    ['..', 'must not start with "."'],
    ['.hidden', 'must not start with "."'],
    ['lone\ud800surrogate', 'Unicode text'],
    ['c1\u0085control', ''],
  ])('name %j, saying why', async (name, why) => {
    const err = await expectHangarError(() => registry.register('flexible', { model: flexible({ model_name: name }) }, false), 'invalid_model_name', 400);
    expect(err.message).toContain(why);
    expect(err.param).toBe('model_name');
  });

  it.each([
    ['a zero-width space', 'qwen2.5-instruct\u200b', 'U+200B'],
    ['a right-to-left override', 'rtl\u202eevil', 'U+202E'],
    ['a byte-order mark', '\ufeffmodel', 'U+FEFF'],
  ])('name with %s (a name passing for another)', async (_what, name, code) => {
    const err = await expectHangarError(() => registry.register('flexible', { model: flexible({ model_name: name }) }, false), 'invalid_model_name', 400);
    expect(err.message).toContain(code);
  });

  it('a name that differs from another only in case: 409 (one file on a case-insensitive disk)', async () => {
    const definition = { model_name: 'BGE-Small-EN-v1.5', dimensions: 4, max_tokens: 8, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: weights }] };
    const err = await expectHangarError(() => registry.register('embedding', { model: definition }, false), 'registration_conflict', 409);
    expect(err.message).toContain('bge-small-en-v1.5 (the names differ only in case or Unicode form)');
    await registry.register('flexible', { model: flexible() }, false);
    await expectHangarError(() => registry.register('flexible', { model: flexible({ model_name: 'My-Clf' }) }, false), 'registration_conflict', 409);
    // Composed and decomposed é, full-width letters: each passed for the other, two files for one name.
    await registry.register('flexible', { model: flexible({ model_name: 'p-caf\u00e9' }) }, false);
    await expectHangarError(() => registry.register('flexible', { model: flexible({ model_name: 'p-cafe\u0301' }) }, false), 'registration_conflict', 409);
    await expectHangarError(() => registry.register('flexible', { model: flexible({ model_name: '\uff4d\uff59-clf' }) }, false), 'registration_conflict', 409);
  });

  it.each([
    ['model_revision', { model_id: 'org/name', model_revision: '../../../../tmp/escaped' }, 'model_specs.0.model_revision'],
    ['model_revision', { model_id: 'org/name', model_revision: 'main/../../x' }, 'model_specs.0.model_revision'],
    ['model_revision', { model_id: 'org/name', model_revision: '/etc' }, 'model_specs.0.model_revision'],
    ['model_id', { model_id: 'a/../../../../tmp/escaped', model_hub: 'modelscope' }, 'model_specs.0.model_id'],
    ['model_id', { model_id: '../../etc' }, 'model_specs.0.model_id'],
    ['model_id', { model_id: 'org/na\u0000me' }, 'model_specs.0.model_id'],
    ['model_id', { model_id: 'org/sub/name' }, 'model_specs.0.model_id'],
    ['quantization', { model_id: 'org/name', quantization: '../../x/{quantization}' }, 'model_specs.0.quantization'],
    ['model_format', { model_id: 'org/name', model_format: '../../x' }, 'model_specs.0.model_format'],
  ])('a %s that would name a folder outside the cache', async (_field, spec, param) => {
    const definition = llmDefinition({ model_specs: [{ model_format: 'ggufv2', model_size_in_billions: 1, quantization: 'Q8_0', ...spec }] });
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_registration', 400);
    expect(err.param).toBe(param);
  });

  it('takes the ids, revisions and quantizations hubs use', async () => {
    const specs = [
      { model_format: 'ggufv2', model_size_in_billions: 1, quantization: 'Q4_K_M', model_id: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', model_revision: 'refs/pr/12' },
      { model_format: 'gptq', model_size_in_billions: 1, quantization: 'Int4', model_id: 'Qwen/Qwen2.5-0.5B-Instruct-GPTQ-{quantization}', model_revision: '0123456789abcdef0123456789abcdef01234567' },
      { model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_id: 'gpt2', model_revision: 'v1.0' },
    ];
    await registry.register('LLM', { model: llmDefinition({ model_specs: specs }) }, false);
  });

  it('clash with a built-in: 409', async () => {
    const definition = { model_name: 'bge-small-en-v1.5', dimensions: 4, max_tokens: 8, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: weights }] };
    const err = await expectHangarError(() => registry.register('embedding', { model: definition }, false), 'registration_conflict', 409);
    expect(err.message).toContain('bge-small-en-v1.5');
  });

  it('clash with a custom model, also while the first is still being registered', async () => {
    const [first, second] = await Promise.allSettled([
      registry.register('flexible', { model: flexible() }, true),
      registry.register('flexible', { model: flexible() }, true),
    ]);
    expect(first.status).toBe('fulfilled');
    const err = await expectHangarError(() => (second.status === 'rejected' ? Promise.reject(second.reason) : undefined), 'registration_conflict', 409);
    expect(err.message).toContain('my-clf');
    await expectHangarError(() => registry.register('flexible', { model: flexible() }, false), 'registration_conflict', 409);
    // Names that pass for each other, all at once: one wins (before, all four did, four
    // files that are one file on a case-insensitive disk).
    const twins = await Promise.allSettled(['race-clf', 'RACE-CLF', 'Race-Clf', '\uff52\uff41\uff43\uff45-clf'].map((model_name) => registry.register('flexible', { model: flexible({ model_name }) }, true)));
    expect(twins.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of twins) if (r.status === 'rejected') expect((r.reason as HangarError).code).toBe('registration_conflict');
  });

  it('a zod failure names the path of the field', async () => {
    const definition = llmDefinition({ model_specs: [{ model_format: 'pytorch', model_size_in_billions: 'huge', model_uri: weights }] });
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_registration', 400);
    expect(err.message).toContain('model_specs.0.model_size_in_billions');
    expect(err.param).toBe('model_specs.0.model_size_in_billions');
  });

  it('custom LLM without model_family', async () => {
    const { model_family: _, ...definition } = llmDefinition();
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_registration', 400);
    expect(err.message).toContain('model_family: You must specify `model_family` when registering custom LLM models.');
  });

  it('custom LLM without version 2', async () => {
    const err = await expectHangarError(() => registry.register('LLM', { model: llmDefinition({ version: 1 }) }, false), 'invalid_registration', 400);
    expect(err.param).toBe('version');
  });

  it('chat LLM of a family that has no template to lend', async () => {
    const err = await expectHangarError(() => registry.register('LLM', { model: llmDefinition({ model_family: 'my-own' }) }, false), 'invalid_registration', 400);
    expect(err.param).toBe('chat_template');
    expect(err.message).toContain('my-own');
  });

  it('tools ability on a family without tool support', async () => {
    const definition = llmDefinition({ model_family: 'gemma-2-it', model_ability: ['chat', 'tools'] });
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_registration', 400);
    expect(err.param).toBe('model_ability');
    expect(err.message).toContain('qwen2.5-instruct');
  });

  it('vision ability on a family without vision, and with one (issue 30)', async () => {
    const definition = llmDefinition({ model_family: 'qwen2.5-instruct', model_ability: ['chat', 'vision'] });
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_registration', 400);
    expect(err.param).toBe('model_ability');
    expect(err.message).toMatch(/vision needs model_family to be a built-in family with vision support \(.*gemma-3-it.*llava-1\.5-hf.*qwen2\.5-vl-instruct.*\), not qwen2\.5-instruct/);
    // Naming a vision family lends its template as for chat families.
    await registry.register('LLM', { model: llmDefinition({ model_family: 'qwen2-vl-instruct', model_ability: ['chat', 'vision'], chat_template: null }) }, false);
  });

  it('spec with neither model_uri nor model_id', async () => {
    const definition = llmDefinition({ model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1 }] });
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_registration', 400);
    expect(err.param).toBe('model_specs.0.model_uri');
  });

  it('relative model_uri', async () => {
    const err = await expectHangarError(() => registry.register('flexible', { model: flexible({ model_uri: 'models/x.joblib' }) }, false), 'invalid_model_uri', 400);
    expect(err.message).toContain('models/x.joblib');
    expect(err.message).toContain('relative');
    expect(err.param).toBe('model_uri');
  });

  it('model_uri that does not exist, in a spec', async () => {
    const definition = llmDefinition({ model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1, model_uri: '/nowhere/at/all' }] });
    const err = await expectHangarError(() => registry.register('LLM', { model: definition }, false), 'invalid_model_uri', 400);
    expect(err.message).toContain('/nowhere/at/all');
    expect(err.message).toContain('model_specs.0.model_uri');
    expect(err.message).toContain('does not exist');
  });

  it('model_uri with another scheme', async () => {
    const err = await expectHangarError(() => registry.register('flexible', { model: flexible({ model_uri: 's3://bucket/model.joblib' }) }, false), 'invalid_model_uri', 400);
    expect(err.message).toContain('s3://');
    expect(err.message).toContain('model_id');
  });

  it('launcher_args that are not a JSON object', async () => {
    for (const args of ['{nope', '[1, 2]']) {
      const err = await expectHangarError(() => registry.register('flexible', { model: flexible({ launcher_args: args }) }, false), 'invalid_registration', 400);
      expect(err.message).toContain(`launcher_args: Invalid model launcher args ${args}.`);
    }
  });

  it('unknown launcher', async () => {
    const err = await expectHangarError(
      () => registry.register('flexible', { model: flexible({ launcher: 'xinference.model.flexible.launchers.yolo' }) }, false),
      'invalid_registration',
      400,
    );
    expect(err.param).toBe('launcher');
    expect(err.message).toContain('sklearn, python, transformers');
  });

  it('flexible model without model_uri', async () => {
    const { model_uri: _, ...definition } = flexible();
    const err = await expectHangarError(() => registry.register('flexible', { model: definition }, false), 'invalid_registration', 400);
    expect(err.param).toBe('model_uri');
  });
});

describe('persistence', () => {
  it('persist: true survives a new Registry on the same home', async () => {
    await registry.register('flexible', { model: JSON.stringify(flexible()) }, true);
    await registry.register('LLM', { model: llmDefinition() }, true);
    await registry.register('audio', { model: { model_name: 'my-espeak-de', model_family: 'espeak', model_ability: ['text2audio'], default_model_config: { voice: 'de' } } }, true);
    expect(await readdir(folder('flexible'))).toEqual(['my-clf.json']);
    const { registry: reopened, logger } = await openRegistry(home);
    expect(logger.warnings).toEqual([]);
    expect(reopened.get('flexible', 'my-clf')).toEqual(registry.get('flexible', 'my-clf'));
    expect(reopened.get('LLM', 'my-llm')).toEqual(registry.get('LLM', 'my-llm'));
    expect(reopened.get('audio', 'my-espeak-de')).toEqual(registry.get('audio', 'my-espeak-de'));
  });

  it('persist: false stays in memory only', async () => {
    await registry.register('flexible', { model: flexible() }, false);
    const { registry: reopened } = await openRegistry(home);
    await expectHangarError(() => reopened.get('flexible', 'my-clf'), 'registration_not_found', 404);
  });

  it('writes atomically: no temp file is left beside the definition', async () => {
    await registry.register('flexible', { model: flexible() }, true);
    await registry.register('flexible', { model: flexible({ model_name: 'second' }) }, true);
    expect((await readdir(folder('flexible'))).sort()).toEqual(['my-clf.json', 'second.json']);
    expect(JSON.parse(await readFile(path.join(folder('flexible'), 'my-clf.json'), 'utf8'))).toMatchObject({ model_name: 'my-clf', launcher: 'sklearn' });
  });

  it('a folder that cannot be made fails the registration and leaves nothing behind', async () => {
    await mkdir(path.join(home, 'model', 'v2'), { recursive: true });
    await writeFile(folder('flexible'), 'a file where the folder should be');
    const err = await expectHangarError(() => registry.register('flexible', { model: flexible() }, true), 'registration_persist_failed', 500);
    expect(err.message).toContain('my-clf');
    await expectHangarError(() => registry.get('flexible', 'my-clf'), 'registration_not_found', 404);
    expect(await readdir(path.join(home, 'model', 'v2'))).toEqual(['flexible']);
    expect(await readFile(folder('flexible'), 'utf8')).toBe('a file where the folder should be');
    // The name is free again once the disk is fixed.
    expect((await registry.list('flexible')).length).toBe(0);
  });

  it('a rename that fails removes its temp file and keeps nothing in memory', async () => {
    // A folder where the target file should be: the write succeeds, the rename cannot.
    await mkdir(path.join(folder('flexible'), 'my-clf.json'), { recursive: true });
    await expectHangarError(() => registry.register('flexible', { model: flexible() }, true), 'registration_persist_failed', 500);
    expect(await readdir(folder('flexible'))).toEqual(['my-clf.json']);
    await expectHangarError(() => registry.get('flexible', 'my-clf'), 'registration_not_found', 404);
  });

  it('loads the good files of a folder that also holds bad ones, warning about each bad one by name', async () => {
    await registry.register('flexible', { model: flexible() }, true);
    await writeFile(path.join(folder('flexible'), 'broken.json'), '{"model_name": "broken", ');
    await writeFile(path.join(folder('flexible'), 'wrong-shape.json'), JSON.stringify({ model_name: 'wrong-shape', launcher: 'sklearn' }));
    await writeFile(path.join(folder('flexible'), 'misnamed.json'), JSON.stringify(flexible({ model_name: 'other-name' })));
    const logger = new RecordingLogger();
    const { registry: reopened } = await openRegistry(home, undefined, logger);
    expect((await reopened.list('flexible')).map((i) => i.model_name)).toEqual(['my-clf']);
    const warned = logger.warnings.map((w) => w.msg).join('\n');
    for (const file of ['broken.json', 'wrong-shape.json', 'misnamed.json']) expect(warned).toContain(file);
    expect(warned).toContain('model_uri');
  });

  it('serves a stored registration whose name a built-in took since (the catalog grew), and gives the built-in back on unregister', async () => {
    // As a registration made before an upgrade added a built-in of that name: the file on disk.
    await mkdir(folder('embedding'), { recursive: true });
    await writeFile(
      path.join(folder('embedding'), 'bge-small-en-v1.5.json'),
      JSON.stringify({ model_name: 'bge-small-en-v1.5', dimensions: 4, max_tokens: 8, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: weights }] }),
    );
    const logger = new RecordingLogger();
    const { registry: reopened } = await openRegistry(home, undefined, logger);
    expect((reopened.get('embedding', 'bge-small-en-v1.5') as { dimensions: number }).dimensions).toBe(4);
    expect(reopened.isBuiltin('embedding', 'bge-small-en-v1.5')).toBe(false);
    const listed = (await reopened.list('embedding')).filter((i) => i.model_name === 'bge-small-en-v1.5');
    expect(listed).toEqual([{ model_name: 'bge-small-en-v1.5', is_builtin: false }]);
    expect(reopened.resolve({ model_type: 'embedding', model_name: 'bge-small-en-v1.5' }).load.model_uri).toBe(weights);
    expect(logger.warnings.map((w) => w.msg).join('\n')).toContain('bge-small-en-v1.5 has the name of a built-in one');
    // A new registration of a built-in's name is still refused.
    await expectHangarError(() => reopened.register('embedding', { model: { model_name: 'bge-base-en-v1.5', dimensions: 4, max_tokens: 8, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: weights }] } }, false), 'registration_conflict', 409);
    // A registration of the name while the unregister runs meets the built-in, never a gap.
    const again = { model: { model_name: 'bge-small-en-v1.5', dimensions: 4, max_tokens: 8, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: weights }] } };
    const [removed, raced] = await Promise.allSettled([reopened.unregister('embedding', 'bge-small-en-v1.5'), reopened.register('embedding', again, true)]);
    expect(removed.status).toBe('fulfilled');
    expect(raced.status === 'rejected' && (raced.reason as HangarError).code).toBe('registration_conflict');
    expect((reopened.get('embedding', 'bge-small-en-v1.5') as { dimensions: number }).dimensions).toBe(384);
    expect(reopened.isBuiltin('embedding', 'bge-small-en-v1.5')).toBe(true);
    expect((await reopened.list('embedding')).filter((i) => i.model_name === 'bge-small-en-v1.5')).toHaveLength(1);
    expect(await readdir(folder('embedding'))).toEqual([]);
  });

  it('still reads a hidden built-in as the family of other registrations', async () => {
    // A stored registration named like the built-in family qwen2.5-instruct hides it by name...
    await mkdir(folder('llm'), { recursive: true });
    await writeFile(path.join(folder('llm'), 'qwen2.5-instruct.json'), JSON.stringify(llmDefinition({ model_name: 'qwen2.5-instruct', model_ability: ['generate'] })));
    const { registry: reopened } = await openRegistry(home);
    expect(reopened.isBuiltin('LLM', 'qwen2.5-instruct')).toBe(false);
    // ...and a chat registration of that family still gets the built-in's template and stop words.
    const record = await reopened.register('LLM', { model: llmDefinition() }, false);
    expect(record).toMatchObject({ model_family: 'qwen2.5-instruct', stop_token_ids: [151643, 151644, 151645] });
    expect((record as { chat_template: string }).chat_template).toContain('<|im_start|>');
  });

  it('loads a persisted model whose weights are gone, with a warning', async () => {
    const doomed = path.join(home, 'doomed.joblib');
    await writeFile(doomed, 'x');
    await registry.register('flexible', { model: flexible({ model_uri: doomed }) }, true);
    const { rm } = await import('node:fs/promises');
    await rm(doomed);
    const logger = new RecordingLogger();
    const { registry: reopened } = await openRegistry(home, undefined, logger);
    expect(reopened.get('flexible', 'my-clf')).toMatchObject({ model_uri: doomed });
    expect(logger.warnings.map((w) => w.msg).join('\n')).toContain('does not exist');
  });
});

describe('unregister', () => {
  it('removes the model and its file', async () => {
    await registry.register('flexible', { model: flexible() }, true);
    await registry.unregister('flexible', 'my-clf');
    expect(await readdir(folder('flexible'))).toEqual([]);
    await expectHangarError(() => registry.get('flexible', 'my-clf'), 'registration_not_found', 404);
    const { registry: reopened } = await openRegistry(home);
    expect(await reopened.list('flexible')).toEqual([]);
  });

  it('removes a model once when asked many times at once: the others find nothing', async () => {
    await registry.register('flexible', { model: flexible() }, true);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => registry.unregister('flexible', 'my-clf')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as HangarError).code).toBe('registration_not_found');
    expect(await readdir(folder('flexible'))).toEqual([]);
  });

  it('refuses a built-in with 400', async () => {
    const err = await expectHangarError(() => registry.unregister('LLM', 'qwen2.5-instruct'), 'builtin_unregister', 400);
    expect(err.message).toContain('qwen2.5-instruct');
  });

  it('answers 404 for an unknown name', async () => {
    const err = await expectHangarError(() => registry.unregister('flexible', 'never-there'), 'registration_not_found', 404);
    expect(err.message).toContain('never-there');
  });

  it('answers 400 for an unknown type', async () => {
    await expectHangarError(() => registry.unregister('hologram', 'x'), 'unsupported_model_type', 400);
  });
});
