import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ModelSource, modelSourceFromEnv } from '../../src/config/model-source.js';

describe('HANGAR_MODEL_SRC', () => {
  it('takes huggingface, modelscope or auto, and refuses anything else at start', () => {
    expect(modelSourceFromEnv({})).toBeNull();
    expect(modelSourceFromEnv({ HANGAR_MODEL_SRC: ' ModelScope ' })).toBe('modelscope');
    expect(modelSourceFromEnv({ HANGAR_MODEL_SRC: 'auto' })).toBe('auto');
    expect(() => modelSourceFromEnv({ HANGAR_MODEL_SRC: 'csghub' })).toThrow(/HANGAR_MODEL_SRC must be huggingface, modelscope or auto, got "csghub"/);
  });

  it('auto: Hugging Face while its endpoint answers, ModelScope when it does not, remembered for a while', async () => {
    const hub = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
    let now = 0;
    const source = new ModelSource('auto', { HF_ENDPOINT: url }, () => now);
    expect(await source.preferred()).toBe('huggingface'); // an error status is still an answer
    await new Promise<void>((resolve) => hub.close(() => resolve()));
    expect(await source.preferred()).toBe('huggingface'); // remembered
    now += 6 * 60_000;
    expect(await source.preferred()).toBe('modelscope');
    // Offline mode asks nothing; each family's own order then.
    expect(await new ModelSource('auto', { HF_ENDPOINT: url, HF_HUB_OFFLINE: '1' }).preferred()).toBeNull();
    expect(await new ModelSource('modelscope', {}).preferred()).toBe('modelscope');
  });
});
