import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tinySklearnIn } from '../integration/harness/fixtures.js';
import { request } from '../integration/harness/http.js';
import { copyTinyModel, tinyLlm, tinyLlmRegistration } from '../integration/harness/tiny-models.js';
import { makeReadable, sharedDir, startHangar, type HangarContainer } from './harness.js';

const image = inject('hangarImage');

// The image's whole path for one model: a tiny real Llama built on the host, mounted
// read-only, registered, launched on the image's own Python environment (torch CPU,
// transformers), asked, terminated; then SIGTERM stops the container gracefully.
describe.skipIf(!image)('the CPU image: model lifecycle', () => {
  let hangar: HangarContainer;
  let models: string;

  beforeAll(async () => {
    models = await sharedDir('hangar-image-models-');
    await copyTinyModel(tinyLlm(), path.join(models, 'tiny-llm'));
    await tinySklearnIn(models);
    await makeReadable(models);
    hangar = await startHangar(image, { mounts: [{ source: models, target: '/models', mode: 'ro' }] });
  });

  afterAll(async () => {
    if (hangar) await hangar.stop().catch(() => undefined);
    await rm(models, { recursive: true, force: true });
  });

  it('registers, launches, serves and terminates a tiny LLM', async () => {
    const reg = await request(hangar.url, 'POST', '/v1/model_registrations/LLM', tinyLlmRegistration('tiny-llm', '/models/tiny-llm'));
    expect(reg.status, reg.text).toBe(200);

    const launch = await request(hangar.url, 'POST', '/v1/models', { model_name: 'tiny-llm', model_type: 'LLM', model_engine: 'Transformers', model_uid: 'tiny' });
    expect(launch.status, `${launch.text}\n${hangar.logs().slice(-3000)}`).toBe(200);
    expect(launch.body.model_uid).toBe('tiny');

    const chat = await request(hangar.url, 'POST', '/v1/chat/completions', {
      model: 'tiny',
      messages: [{ role: 'user', content: 'Hello, how are you today?' }],
      max_tokens: 8,
      temperature: 0,
    });
    expect(chat.status, chat.text).toBe(200);
    expect(chat.body.object).toBe('chat.completion');
    expect(chat.body.usage.completion_tokens).toBeGreaterThan(0);
    expect(chat.body.usage.completion_tokens).toBeLessThanOrEqual(8);
    expect(typeof chat.body.choices[0].message.content).toBe('string');

    expect((await request(hangar.url, 'DELETE', '/v1/models/tiny')).status).toBe(200);
    expect((await request(hangar.url, 'GET', '/v1/models/tiny')).status).toBe(404);
    const listed = await request(hangar.url, 'GET', '/v1/models');
    expect(listed.body.data).toEqual([]);
  });

  it('stops on SIGTERM by draining and stopping its models, exit code 0', async () => {
    const reg = await request(hangar.url, 'POST', '/v1/model_registrations/flexible', {
      model: { model_name: 'clf', model_uri: '/models/classifier.joblib', launcher: 'sklearn' },
      persist: false,
    });
    expect(reg.status, reg.text).toBe(200);
    const launch = await request(hangar.url, 'POST', '/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'clf' });
    expect(launch.status, launch.text).toBe(200);

    const started = Date.now();
    const exitCode = await hangar.stop(60);
    // 0 is the service's own exit after the drain; `docker stop` escalating to SIGKILL
    // would read 137, and a pid 1 that ignored SIGTERM would have taken the full 60 s.
    expect(exitCode, hangar.logs().slice(-3000)).toBe(0);
    expect(Date.now() - started).toBeLessThan(55_000);
    expect(hangar.logs()).toContain('shutting down: draining, then stopping every model');
    hangar = undefined as unknown as HangarContainer;
  });
});
