import { rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tinySklearnIn, type SklearnFixture } from '../integration/harness/fixtures.js';
import { request } from '../integration/harness/http.js';
import { docker, makeReadable, sharedDir, startHangar, type HangarContainer } from './harness.js';

const image = inject('hangarImage');

// An upgrade is a new container on the same volume: what the README promises survives
// it (registrations, and the models that were running) is checked with two containers.
describe.skipIf(!image)('the CPU image: state on the HANGAR_HOME volume survives a new container', () => {
  const volume = `hangar-test-${randomUUID().slice(0, 8)}`;
  let models: string;
  let model: SklearnFixture;
  let second: HangarContainer | undefined;

  beforeAll(async () => {
    models = await sharedDir('hangar-image-persist-');
    model = await tinySklearnIn(models);
    await makeReadable(models);
    docker(['volume', 'create', volume]);
  });

  afterAll(async () => {
    if (second) await second.stop().catch(() => undefined);
    docker(['volume', 'rm', '-f', volume]);
    await rm(models, { recursive: true, force: true });
  });

  it('keeps persisted registrations and relaunches the running models', async () => {
    const mounts = [{ source: models, target: '/models', mode: 'ro' as const }];
    const first = await startHangar(image, { volume, mounts });
    const reg = await request(first.url, 'POST', '/v1/model_registrations/flexible', {
      model: { model_name: 'kept-clf', model_uri: '/models/classifier.joblib', launcher: 'sklearn' },
      persist: true,
    });
    expect(reg.status, reg.text).toBe(200);
    const launch = await request(first.url, 'POST', '/v1/models', { model_name: 'kept-clf', model_type: 'flexible', model_uid: 'kept' });
    expect(launch.status, launch.text).toBe(200);
    expect(await first.stop(60), first.logs().slice(-3000)).toBe(0);

    second = await startHangar(image, { volume, mounts });
    const kept = await request(second.url, 'GET', '/v1/model_registrations/flexible/kept-clf');
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.model_uri).toBe('/models/classifier.joblib');

    // Restored at start: it answers once its runtime is back (bounded wait).
    let infer = await request(second.url, 'POST', '/v1/flexible/infers', { model: 'kept', args: [model.rows] });
    for (let i = 0; i < 60 && infer.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 500));
      infer = await request(second.url, 'POST', '/v1/flexible/infers', { model: 'kept', args: [model.rows] });
    }
    expect(infer.status, `${infer.text}\n${second.logs().slice(-3000)}`).toBe(200);
    expect(infer.body).toEqual(model.predictions);
  });
});
