import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { estimateMemory } from '../../src/registry/memory-estimate.js';
import type { ResolvedModel } from '../../src/registry/resolved-model.js';
import { runtimeOverhead } from '../../src/registry/runtime-overhead.js';
import { safetensorsHeader } from '../../src/registry/weight-files.js';
import { entry, header, str, u32 } from '../fixtures/gguf-bytes.js';

/** A real safetensors file: the 8-byte header length, the JSON header, then the tensors' bytes. */
async function writeSafetensors(file: string, tensors: Record<string, { dtype: string; shape: number[] }>): Promise<void> {
  let offset = 0;
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  const sizes: Record<string, number> = { F32: 4, BF16: 2, F16: 2, I8: 1 };
  for (const [name, t] of Object.entries(tensors)) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * sizes[t.dtype]!;
    header[name] = { ...t, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));
  await writeFile(file, Buffer.concat([prefix, json, Buffer.alloc(offset)]));
}

const CONFIG = { num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, hidden_size: 64, max_position_embeddings: 512 };

function resolved(engine: string, load: Partial<ResolvedModel['load']>, modelType: ResolvedModel['modelType'] = 'LLM'): ResolvedModel {
  return { modelType, modelName: 'm', engine, runtimeEngine: engine, cpuBound: true, abilities: [], description: {}, load: { launcher_args: {}, ...load } };
}

describe('the memory estimate', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-estimate-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads parameters from safetensors headers, not their bytes', async () => {
    const file = path.join(dir, 'model.safetensors');
    await writeSafetensors(file, { a: { dtype: 'BF16', shape: [4, 8] }, b: { dtype: 'F32', shape: [8] } });
    expect(await safetensorsHeader(file)).toEqual({ parameters: 40, bytes: 32 * 2 + 8 * 4 });
    await writeFile(path.join(dir, 'not.safetensors'), 'definitely not one');
    expect(await safetensorsHeader(path.join(dir, 'not.safetensors'))).toBeNull();
  });

  it('takes a safetensors header whose dimensions are no counts for an unknown size, never NaN or negative', async () => {
    const file = path.join(dir, 'evil.safetensors');
    for (const shape of [['abc'], [-1_000_000_000, 1000], [1.5], [null]]) {
      const json = Buffer.from(JSON.stringify({ t: { dtype: 'F32', shape, data_offsets: [0, 0] } }));
      const prefix = Buffer.alloc(8);
      prefix.writeBigUInt64LE(BigInt(json.length));
      await writeFile(file, Buffer.concat([prefix, json]));
      expect(await safetensorsHeader(file), JSON.stringify(shape)).toBeNull();
    }
    const estimate = await estimateMemory({ resolved: resolved('transformers', { model_uri: dir, model_format: 'pytorch', model_size_in_billions: 1 }), engineKwargs: {}, onGpu: true, cacheDir: dir });
    // The file counts by its bytes, as any weight file whose header says nothing does.
    expect(estimate).toMatchObject({ basis: 'files', weights: 65 });
    expect(Number.isFinite(estimate.bytes) && estimate.bytes > 0).toBe(true);
  });

  it('counts float32 weights on CPU, the checkpoint\'s dtype on a GPU, and a KV cache from the config', async () => {
    await writeSafetensors(path.join(dir, 'model-00001-of-00002.safetensors'), { a: { dtype: 'BF16', shape: [1000, 100] } });
    await writeSafetensors(path.join(dir, 'model-00002-of-00002.safetensors'), { b: { dtype: 'BF16', shape: [500] } });
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(CONFIG));
    const model = resolved('transformers', { model_uri: dir, context_length: 32768 });
    const cpu = await estimateMemory({ resolved: model, engineKwargs: {}, onGpu: false, cacheDir: dir });
    // 100,500 parameters as float32; a cache for the model's own 512 tokens: 2 layers x 2 kv heads x 16 dims x K and V x 4 bytes.
    expect(cpu).toEqual({ weights: 100_500 * 4, kv_cache: 512 * 2 * 2 * 16 * 2 * 4, overhead: runtimeOverhead('transformers'), bytes: 100_500 * 4 + 512 * 2 * 2 * 16 * 2 * 4 + runtimeOverhead('transformers'), basis: 'files' });
    const gpu = await estimateMemory({ resolved: model, engineKwargs: {}, onGpu: true, cacheDir: dir });
    expect(gpu.weights).toBe(100_500 * 2);
    expect(gpu.kv_cache).toBe(512 * 2 * 2 * 16 * 2 * 2);
    const half = await estimateMemory({ resolved: model, engineKwargs: { torch_dtype: 'bfloat16' }, onGpu: false, cacheDir: dir });
    expect(half.weights).toBe(100_500 * 2);
    const short = await estimateMemory({ resolved: model, engineKwargs: { max_model_len: 128 }, onGpu: false, cacheDir: dir });
    expect(short.kv_cache).toBe(128 * 2 * 2 * 16 * 2 * 4);
  });

  it('finds a hub model in the cache by its ref, else falls back on the catalog\'s size', async () => {
    const repo = path.join(dir, 'huggingface', 'models--org--m');
    const sha = 'a'.repeat(40);
    await mkdir(path.join(repo, 'snapshots', sha), { recursive: true });
    await mkdir(path.join(repo, 'refs'), { recursive: true });
    await writeFile(path.join(repo, 'refs', 'main'), sha);
    await writeSafetensors(path.join(repo, 'snapshots', sha, 'model.safetensors'), { a: { dtype: 'F32', shape: [10] } });
    const cached = await estimateMemory({ resolved: resolved('sentence_transformers', { model_id: 'org/m', model_size_in_billions: 7 }, 'embedding'), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(cached).toMatchObject({ basis: 'files', weights: 40, kv_cache: 0 });
    const fromCatalog = await estimateMemory({ resolved: resolved('llama_cpp', { model_id: 'org/other', model_format: 'ggufv2', quantization: 'Q4_K_M', model_size_in_billions: '0_5' }), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(fromCatalog).toMatchObject({ basis: 'catalog', weights: Math.round(0.5e9 * 4.5 / 8) });
    const pytorch = await estimateMemory({ resolved: resolved('transformers', { model_id: 'org/other', model_format: 'pytorch', quantization: 'none', model_size_in_billions: 7 }), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(pytorch).toMatchObject({ basis: 'catalog', weights: 7e9 * 4 });
    const unknown = await estimateMemory({ resolved: resolved('sklearn', { model_id: 'org/none' }, 'flexible'), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(unknown).toEqual({ basis: 'none', weights: 0, kv_cache: 0, overhead: runtimeOverhead('sklearn'), bytes: runtimeOverhead('sklearn') });
  });

  it('sizes a model not downloaded yet from the hub\'s file listing and config, before any download; the catalog when the hub is silent or offline', async () => {
    // A CDN on another origin, where the hub sends a GGUF file: its header (the shape)
    // comes from the start of the file, asked for by range; the token stays with the hub.
    const cdnSaw: Array<{ range?: string; authorization?: string }> = [];
    const ggufHead = header([
      entry('general.architecture', 8, str('llama')),
      entry('llama.context_length', 4, u32(4096)),
      entry('llama.block_count', 4, u32(4)),
      entry('llama.embedding_length', 4, u32(256)),
      entry('llama.attention.head_count', 4, u32(8)),
      entry('llama.attention.head_count_kv', 4, u32(2)),
      entry('tokenizer.ggml.model', 8, str('gpt2')),
    ]);
    const cdn = createServer((req, res) => {
      cdnSaw.push({ range: req.headers.range, authorization: req.headers.authorization });
      res.writeHead(206, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.concat([ggufHead, Buffer.alloc(64 * 1024)]));
    });
    await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
    // The hub's API on loopback: the tree listing huggingface_hub asks for, and config.json.
    const asked: string[] = [];
    const hub = createServer((req, res) => {
      asked.push(req.url ?? '');
      const json = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/api/models/org/big/tree/main?recursive=true') {
        return json(200, [
          { type: 'file', path: 'config.json', size: 600 },
          { type: 'file', path: 'model-00001-of-00002.safetensors', size: 10, lfs: { size: 3_000_000_000 } },
          { type: 'file', path: 'model-00002-of-00002.safetensors', size: 10, lfs: { size: 1_000_000_000 } },
          { type: 'file', path: 'consolidated.safetensors', size: 10, lfs: { size: 4_000_000_000 } },
          { type: 'directory', path: 'original' },
          // A fine-tune's training checkpoints: not loaded, not counted.
          { type: 'file', path: 'checkpoint-500/model.safetensors', size: 10, lfs: { size: 4_000_000_000 } },
        ]);
      }
      if (req.url === '/org/big/resolve/main/config.json') return json(200, { ...CONFIG, torch_dtype: 'bfloat16' });
      if (req.url === '/api/models/org/q-GGUF/tree/main?recursive=true') {
        return json(200, [
          { type: 'file', path: 'q-Q4_K_M.gguf', lfs: { size: 500_000_000 } },
          { type: 'file', path: 'q-Q8_0.gguf', lfs: { size: 900_000_000 } },
          { type: 'file', path: 'F16/q-F16-00001-of-00002.gguf', lfs: { size: 1_000_000_000 } },
          { type: 'file', path: 'F16/q-F16-00002-of-00002.gguf', lfs: { size: 800_000_000 } },
        ]);
      }
      if (req.url === '/org/q-GGUF/resolve/main/q-Q8_0.gguf') {
        res.writeHead(302, { location: `http://127.0.0.1:${(cdn.address() as AddressInfo).port}/blob/q-Q8_0.gguf` });
        return res.end();
      }
      if (req.url === '/api/models/org/liar/tree/main?recursive=true') {
        return json(200, [{ type: 'file', path: 'model.safetensors', size: 'abc' }, { type: 'file', path: 'b.safetensors', lfs: { size: -5_000_000_000 } }]);
      }
      if (req.url?.startsWith('/api/models/org/slow/')) return; // never answers
      json(404, { error: 'Repository not found' });
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
    const access = (env: Record<string, string> = {}) => ({ env: { HF_ENDPOINT: endpoint, ...env }, timeoutMs: 500 });
    try {
      const big = await estimateMemory({ resolved: resolved('transformers', { model_id: 'org/big', model_format: 'pytorch', model_size_in_billions: 70 }), engineKwargs: {}, onGpu: true, cacheDir: dir, hub: access() });
      // 4 GB of bf16 safetensors (the consolidated copy left out): 2e9 parameters, at 2 bytes on a GPU.
      expect(big).toMatchObject({ basis: 'hub', weights: 4_000_000_000 });
      expect(big.kv_cache).toBe(512 * 2 * 2 * 16 * 2 * 2);
      const onCpu = await estimateMemory({ resolved: resolved('transformers', { model_id: 'org/big', model_format: 'pytorch', model_size_in_billions: 70 }), engineKwargs: {}, onGpu: false, cacheDir: dir, hub: access() });
      expect(onCpu.weights).toBe(8_000_000_000);
      const gguf = await estimateMemory({ resolved: resolved('llama_cpp', { model_id: 'org/q-GGUF', model_format: 'ggufv2', quantization: 'Q8_0', model_file_name_template: 'q-{quantization}.gguf', model_size_in_billions: 7 }), engineKwargs: {}, onGpu: false, cacheDir: dir, hub: access({ HF_TOKEN: 'hf_secret' }) });
      // The KV cache from the header: 4096 trained tokens (under the 8192 default n_ctx)
      // for each of the 8 default parallel sequences; 4 layers, 2 KV heads of 32, K and V, f16.
      expect(gguf).toMatchObject({ basis: 'hub', weights: 900_000_000, kv_cache: 4096 * 8 * 4 * 2 * 32 * 2 * 2 });
      expect(cdnSaw).toEqual([{ range: expect.stringMatching(/^bytes=0-\d+$/) }]);
      // A split quantization is all its parts (its single-file name is only the first).
      const split = { model_file_name_template: 'F16/q-{quantization}-00001-of-00002.gguf', model_file_name_split_template: '{quantization}/q-{quantization}-{part}.gguf', quantization_parts: { F16: ['00001-of-00002', '00002-of-00002'] } };
      const f16 = await estimateMemory({ resolved: resolved('llama_cpp', { model_id: 'org/q-GGUF', model_format: 'ggufv2', quantization: 'F16', ...split, model_size_in_billions: 7 }), engineKwargs: {}, onGpu: false, cacheDir: dir, hub: access() });
      // Its first part's header is not there (404): the bytes still count, with no KV term.
      expect(f16).toMatchObject({ basis: 'hub', weights: 1_800_000_000, kv_cache: 0 });
      // A listing whose sizes are no byte counts is no basis: the catalog's size serves.
      for (const [model, env] of [['org/slow', {}], ['org/missing', {}], ['org/liar', {}], ['org/big2', { HF_HUB_OFFLINE: '1' }]] as const) {
        const fallback = await estimateMemory({ resolved: resolved('transformers', { model_id: model, model_format: 'pytorch', model_size_in_billions: 1 }), engineKwargs: {}, onGpu: true, cacheDir: dir, hub: access(env) });
        expect(fallback, model).toMatchObject({ basis: 'catalog', weights: 2e9 });
      }
      expect(asked.some((u) => u.startsWith('/api/models/org/big2'))).toBe(false);
    } finally {
      for (const server of [hub, cdn]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  it('counts the weights the engine loads: not original/, training checkpoints or a consolidated copy; not another quantization\'s file', async () => {
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(CONFIG));
    await writeSafetensors(path.join(dir, 'model-00001-of-00002.safetensors'), { a: { dtype: 'BF16', shape: [100] } });
    await writeSafetensors(path.join(dir, 'model-00002-of-00002.safetensors'), { b: { dtype: 'BF16', shape: [100] } });
    await writeSafetensors(path.join(dir, 'consolidated.safetensors'), { ab: { dtype: 'BF16', shape: [200] } });
    for (const sub of ['original', 'checkpoint-500']) {
      await mkdir(path.join(dir, sub));
      await writeSafetensors(path.join(dir, sub, 'model.safetensors'), { c: { dtype: 'BF16', shape: [1000] } });
    }
    const estimate = await estimateMemory({ resolved: resolved('transformers', { model_uri: dir, model_format: 'pytorch', model_size_in_billions: 1 }), engineKwargs: {}, onGpu: true, cacheDir: dir });
    expect(estimate).toMatchObject({ basis: 'files', weights: 200 * 2 });
    // A GGUF repo in the cache with another quantization than the one asked for: that one's size is no basis.
    const gguf = path.join(dir, 'gguf');
    await mkdir(gguf);
    await writeFile(path.join(gguf, 'm-Q4_K_M.gguf'), Buffer.alloc(1000));
    const other = await estimateMemory({ resolved: resolved('llama_cpp', { model_uri: gguf, model_format: 'ggufv2', quantization: 'Q8_0', model_file_name_template: 'm-{quantization}.gguf', model_size_in_billions: 1 }), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(other.basis).not.toBe('files');
  });

  it('counts no weights for the simulator, whatever size it pretends to be', async () => {
    const estimate = await estimateMemory({ resolved: resolved('simulator', { model_size_in_billions: 8 }), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(estimate).toEqual({ bytes: runtimeOverhead('simulator'), weights: 0, kv_cache: 0, overhead: runtimeOverhead('simulator'), basis: 'files' });
  });

  it('takes a single file as it is: a pickle\'s bytes', async () => {
    const file = path.join(dir, 'clf.joblib');
    await writeFile(file, Buffer.alloc(12_345));
    const estimate = await estimateMemory({ resolved: resolved('sklearn', { model_uri: file }, 'flexible'), engineKwargs: {}, onGpu: false, cacheDir: dir });
    expect(estimate).toMatchObject({ basis: 'files', weights: 12_345 });
  });
});
