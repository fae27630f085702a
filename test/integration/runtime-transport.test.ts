import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Dealer } from 'zeromq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { processPids, waitFor } from './harness/processes.js';
import { pokeRaw } from './harness/stray-peers.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

const PID_MODEL = 'import os\n\ndef load():\n    return {}\n\ndef infer(model):\n    return {"pid": os.getpid()}\n';

// A home deeper than a Unix socket path can hold (about 107 bytes): the runtime
// sockets move to a private folder outside it, and a stray peer on them (a ZeroMQ
// client, or anything that opens the file) must not count as the runtime leaving.
describe('runtime sockets of a service with a long home', () => {
  let work: string;
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let socketDir = '';

  beforeAll(async () => {
    work = await makeHome('hangar-transport-');
    const home = path.join(work, 'a-home-folder-deep-enough'.repeat(5));
    expect(home.length).toBeGreaterThanOrEqual(120);
    await writeFile(path.join(work, 'pid.py'), PID_MODEL);
    server = await startServer({ home });
    api = client(server.url);
    const reg = { model_name: 'pid', model_uri: path.join(work, 'pid.py'), launcher: 'python' };
    expect((await api.post('/v1/model_registrations/flexible', { model: reg, persist: false })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  async function runtimePid(): Promise<number> {
    const res = await api.post('/v1/flexible/infers', { model: 'pid' });
    expect(res.status, res.text).toBe(200);
    return res.body.pid as number;
  }

  it('launches, says which transport it chose, and keeps the socket files private', async () => {
    const launch = await api.post('/v1/models', { model_name: 'pid', model_type: 'flexible', model_uid: 'pid' });
    expect(launch.status, launch.text).toBe(200);
    expect(await runtimePid()).toBeGreaterThan(0);
    const said = server.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('runtime sockets:'));
    expect(said?.transport).toBe('ipc');
    socketDir = String(said?.socket_dir);
    expect(socketDir.startsWith(server.home)).toBe(false);
    const folder = await stat(socketDir);
    expect(folder.mode & 0o777).toBe(0o700);
    expect(folder.uid).toBe(process.getuid!());
    expect((await readdir(socketDir)).filter((f) => f.endsWith('.ctl'))).toHaveLength(1);
    // What the API shows says nothing of where the sockets are.
    const described = await api.get('/v1/models/pid');
    expect(JSON.stringify(described.body)).not.toContain(socketDir);
    const replicas = await api.get('/v1/models/pid/replicas');
    expect(JSON.stringify(replicas.body)).not.toContain(socketDir);
  }, 60_000);

  it('stays the same process when strangers connect to its sockets and leave', async () => {
    const pid = await runtimePid();
    const files = (await readdir(socketDir)).map((f) => path.join(socketDir, f));
    // More pokes than the restart limit (5 in the window) would survive as crashes.
    for (let i = 0; i < 8; i++) {
      for (const file of files) {
        const dealer = new Dealer({ routingId: `stray-${i}`, linger: 0 });
        dealer.connect(`ipc://${file}`);
        await new Promise((r) => setTimeout(r, 60));
        dealer.close();
        await pokeRaw({ path: file }, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      }
    }
    // Long enough for a wrongly declared death and its restart to show.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await runtimePid()).toBe(pid);
    const instance = (await api.get('/v1/models/instances?model_uid=pid')).body[0];
    expect(instance.status).toBe('READY');
    const events = (await api.get('/v1/models/pid/events')).body.map((e: any) => e.event_content as string);
    expect(events.filter((e: string) => e.includes('died'))).toEqual([]);
    expect(server.logs.some((l) => String(l.msg).includes('a peer other than the runtime'))).toBe(true);
  }, 60_000);

  it('still notices its own runtime leaving', async () => {
    const pid = await runtimePid();
    process.kill(pid, 'SIGKILL');
    expect(await waitFor(async () => (await api.post('/v1/flexible/infers', { model: 'pid' })).body?.pid !== undefined && (await runtimePid()) !== pid, 30_000)).toBe(true);
    expect(await processPids((p) => p.pid === pid)).toEqual([]);
  }, 60_000);

  it('removes its private socket folder when it stops', async () => {
    expect((await api.delete('/v1/models/pid')).status).toBe(200);
    await server.stop();
    await expect(stat(socketDir)).rejects.toThrow();
  }, 60_000);
});
