import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { writePythonLauncher } from './harness/fixtures.js';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

// More calls in flight to one runtime than ZeroMQ queues (its high-water mark is
// 1,000 messages): the control plane must hold them back, not fail them. Before the
// fix, zeromq.js threw EBUSY for sends behind a full queue and clients got 500s.
describe('back-pressure towards a runtime', () => {
  let server: TestServer;
  let work: string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1500 });

  const infer = (i: number): Promise<{ status: number; body: { values?: number[] }; i: number }> =>
    new Promise((resolve, reject) => {
      const url = new URL(`${server.url}/v1/flexible/infers`);
      const payload = JSON.stringify({ model: 'scaler', args: [[i]] });
      const req = http.request(
        { agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', timeout: 60_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { values?: number[] }, i }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(payload);
    });

  beforeAll(async () => {
    work = await makeHome('hangar-backpressure-');
    const launcher = await writePythonLauncher(work);
    // The runtime is paused for a few seconds below: neither its heartbeat nor its
    // connection's (ZMTP, 800 ms by default: what finds a frozen runtime, recovery.test.ts)
    // may time out. Opening 1,500 connections on a loaded CI machine can take longer.
    server = await startServer({ env: { HANGAR_HEARTBEAT_TIMEOUT_MS: '60000', HANGAR_CONNECTION_TIMEOUT_MS: '60000' } });
    const api = client(server.url);
    expect((await api.post('/v1/model_registrations/flexible', { model: { model_name: 'scaler', model_uri: launcher, launcher: 'python' }, persist: false })).status).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'scaler' });
    expect(launch.status, launch.text).toBe(200);
  }, 60_000);

  afterAll(async () => {
    agent.destroy();
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('answers 1,500 calls queued to a paused replica, every one 200 with its own result', async () => {
    const api = client(server.url);
    const replica = async () => (await api.get('/v1/models/scaler/replicas')).body[0] as { pid: number; in_flight: number };
    const { pid } = await replica();
    // Paused, the runtime reads nothing, so the calls pile up in ZeroMQ's queue and past it.
    process.kill(pid, 'SIGSTOP');
    let results;
    try {
      const pending = Promise.all(Array.from({ length: 1500 }, (_, i) => infer(i)));
      await waitFor(async () => (await replica()).in_flight >= 1200, 20_000);
      process.kill(pid, 'SIGCONT');
      results = await pending;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const failed = results.filter((r) => r.status !== 200);
    expect(failed.slice(0, 3), `${failed.length} failed`).toEqual([]);
    for (const r of results) expect(r.body.values).toEqual([r.i]);
  }, 90_000);
});
