import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { InstanceStore } from '../../src/supervisor/instance-store.js';
import { SavedLaunches } from '../../src/supervisor/saved-launches.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';

const request = { model_name: 'm', model_type: 'LLM', replica: 1, envs: {}, engine_kwargs: {} } as unknown as LaunchRequest;

/** A state file that does not read whole is copied aside before the next save writes over it. */
describe('damaged state files', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'hangar-damaged-'));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const copies = async (name: string) => (await readdir(folder)).filter((f) => f.startsWith(`${name}.damaged-`));

  it('keeps a cut-short instances.json as it was, then saves anew beside the copy', async () => {
    const file = path.join(folder, 'instances.json');
    const cut = '{"version": 1, "instances": [{"uid": "ok", "request": {"model_na';
    await writeFile(file, cut);
    const store = new InstanceStore(file, createLogger('silent'));
    expect(await store.load()).toEqual([]);
    const [copy] = await copies('instances.json');
    expect(copy).toBeDefined();
    await store.save([{ uid: 'new', request }]);
    expect(await readFile(path.join(folder, copy!), 'utf8')).toBe(cut);
    expect(JSON.parse(await readFile(file, 'utf8')).instances.map((i: { uid: string }) => i.uid)).toEqual(['new']);
  });

  it('keeps a copy when entries of another shape are skipped, and reads the rest', async () => {
    const file = path.join(folder, 'instances.json');
    await writeFile(file, JSON.stringify({ version: 1, instances: [{ uid: 'ok', request }, { uid: 7 }] }));
    expect((await new InstanceStore(file, createLogger('silent')).load()).map((i) => i.uid)).toEqual(['ok']);
    expect(await copies('instances.json')).toHaveLength(1);
  });

  it('keeps the autostart list it could not read, and the next change does not lose it', async () => {
    const file = path.join(folder, 'autostart.json');
    const bad = `${JSON.stringify({ version: 1, models: [{ uid: 'kept', request }] })},`;
    await writeFile(file, bad);
    const list = new SavedLaunches(file, createLogger('silent'));
    await list.load();
    expect(list.list()).toEqual([]);
    // The next start, before any change: the copy is not made again (one per start, and a warning each).
    await new Promise((resolve) => setTimeout(resolve, 5)); // a copy's name has the time to the millisecond
    await new SavedLaunches(file, createLogger('silent')).load();
    expect(await copies('autostart.json')).toHaveLength(1);
    await list.put('added', request);
    const [copy] = await copies('autostart.json');
    expect(await readFile(path.join(folder, copy!), 'utf8')).toBe(bad);
    // A good file leaves no copy.
    const again = new SavedLaunches(file, createLogger('silent'));
    await again.load();
    expect(again.list().map((e) => e.uid)).toEqual(['added']);
    expect(await copies('autostart.json')).toHaveLength(1);
  });
});
