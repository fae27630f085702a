import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { removeHome, repoRoot, startServer, venvPython, type TestServer } from './harness/server.js';
import { jsonEvents, readSse } from './harness/sse-client.js';

/** Request abort and progress, and Xinference's remaining service routes, on the real server with the simulator. */
describe('request control and service routes (real server)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const messages = [{ role: 'user', content: 'hi' }];

  beforeAll(async () => {
    server = await startServer();
    api = client(server.url);
    const launch = await api.post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', step_ms: 20, ttft_ms: 0 });
    expect(launch.status, launch.text).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
  });

  /** A running request's progress, read once it is above 0 (within 10 s). */
  const progressOnceMoving = async (id: string): Promise<number> => {
    let progress = 0;
    await waitFor(async () => {
      const res = await api.get(`/v1/requests/${id}/progress`);
      progress = res.body?.progress ?? 0;
      return res.status === 200 && progress > 0;
    }, 10_000);
    return progress;
  };

  it('aborts a stream by its x-request-id: progress moves, the stream ends with request_aborted', async () => {
    const stream = readSse(server.url, '/v1/chat/completions', { model: 'sim', messages, max_tokens: 200, stream: true }, { headers: { 'x-request-id': 'stream-to-abort' } });
    expect(await progressOnceMoving('stream-to-abort')).toBeLessThan(1);
    const abort = await api.post('/v1/models/sim/requests/stream-to-abort/abort', {});
    expect(abort.status, abort.text).toBe(200);
    expect(abort.body).toEqual({ msg: 'DONE' });
    const result = await stream;
    const events = jsonEvents(result);
    expect(events.at(-1)?.error).toMatchObject({ code: 'request_aborted' });
    expect(result.data).not.toContain('[DONE]');
    expect(events.filter((e) => e.choices?.[0]?.delta?.content).length).toBeLessThan(200);
    // Finished ids read 1 for a while; a second abort finds nothing to stop.
    expect((await api.get('/v1/requests/stream-to-abort/progress')).body).toEqual({ progress: 1 });
    expect((await api.post('/v1/models/sim/requests/stream-to-abort/abort', {})).body).toEqual({ msg: 'NOT_FOUND' });
  });

  it('reports the progress of a streamed list of prompts over all its choices, and aborts them all', async () => {
    // Two prompts × n 2 of 200 tokens at 20 ms (4 s): progress counts the four choices' tokens out of 800.
    const body = { model: 'sim', prompt: ['one', 'two'], n: 2, max_tokens: 200, stream: true };
    const stream = readSse(server.url, '/v1/completions', body, { headers: { 'x-request-id': 'list-to-abort' } });
    expect(await progressOnceMoving('list-to-abort')).toBeLessThan(1);
    expect((await api.post('/v1/models/sim/requests/list-to-abort/abort', {})).body).toEqual({ msg: 'DONE' });
    const events = jsonEvents(await stream);
    expect(events.at(-1)?.error).toMatchObject({ code: 'request_aborted' });
    expect(new Set(events.flatMap((e) => (e.choices ?? []).map((c: { index: number }) => c.index)))).toEqual(new Set([0, 1, 2, 3]));
  });

  it("aborts a non-stream call by the client's own request_id with 499 request_aborted", async () => {
    const call = api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 150, request_id: 'my-own-id' });
    await waitFor(async () => (await api.get('/v1/requests/my-own-id/progress')).status === 200, 10_000);
    // Through the Python client, with Xinference's method name.
    const py = execFileSync(venvPython, ['-c', 'import json, sys; from hangar_client import Client; print(json.dumps(Client(sys.argv[1]).abort_request("sim", "my-own-id")))', server.url], {
      env: { ...process.env, PYTHONPATH: path.join(repoRoot, 'python-runtime') },
      encoding: 'utf8',
    });
    expect(JSON.parse(py)).toEqual({ msg: 'DONE' });
    const answer = await call;
    expect(answer.status).toBe(499);
    expect(answer.body.error.code).toBe('request_aborted');
    // The model serves the next request as usual.
    expect((await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 3 })).status).toBe(200);
    // The aborted id stays blocked for the abort's block_duration (Xinference's 30 s):
    // sent again meanwhile, it is refused, and another id runs.
    const again = await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 3, request_id: 'my-own-id' });
    expect([again.status, again.body.error?.code, again.body.error?.param]).toEqual([409, 'request_blocked', 'request_id']);
    expect(again.body.detail).toContain('The request has been aborted: my-own-id');
  });

  it('blocks an id for the block_duration asked, also one aborted before its request came', async () => {
    // An abort that overtakes its request (Xinference's reason for the block): NOT_FOUND, and blocked.
    expect((await api.post('/v1/models/sim/requests/early/abort', { block_duration: 1 })).body).toEqual({ msg: 'NOT_FOUND' });
    const early = await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 3, generate_config: { request_id: 'early' } });
    expect(early.body.error?.code).toBe('request_blocked');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 3, request_id: 'early' })).status).toBe(200);
    // block_duration 0: no block.
    expect((await api.post('/v1/models/sim/requests/unblocked/abort', { block_duration: 0 })).body).toEqual({ msg: 'NOT_FOUND' });
    expect((await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 3, request_id: 'unblocked' })).status).toBe(200);
    const negative = await api.post('/v1/models/sim/requests/x/abort', { block_duration: -1 });
    expect([negative.status, negative.body.error?.param]).toEqual([400, 'block_duration']);
  });

  it('answers unknown ids and models as Xinference does', async () => {
    expect((await api.post('/v1/models/sim/requests/nobody/abort', {})).body).toEqual({ msg: 'NOT_FOUND' });
    // A model that is not running: Xinference's NO_OP, not an error its client raises on.
    expect((await api.post('/v1/models/no-such-model/requests/x/abort', {})).body).toEqual({ msg: 'NO_OP' });
    const progress = await api.get('/v1/requests/nobody/progress');
    expect(progress.status).toBe(400);
    expect(progress.body.error.code).toBe('request_not_found');
  });

  it('answers the address, supervisor and virtualenv routes', async () => {
    const address = await api.get('/v1/address');
    expect(address.body).toBe(new URL(server.url).host);
    expect((await api.get('/v1/supervisor')).body).toMatchObject({ supervisor_ip: new URL(server.url).host, address: new URL(server.url).host, mode: 'local', models: 1 });
    expect((await api.get('/v1/virtualenvs')).body).toEqual({ list: [] });
    const noName = await request(server.url, 'DELETE', '/v1/virtualenvs');
    expect(noName.status).toBe(400);
    expect((await request(server.url, 'DELETE', '/v1/virtualenvs?model_name=x')).body).toEqual({ result: true });
  });

  it('adds a replica, then drains and removes one without cutting the calls it serves', async () => {
    // Through the Python client, as a script would.
    const py = execFileSync(venvPython, ['-c', 'import json, sys; from hangar_client import Client; print(json.dumps(Client(sys.argv[1]).add_model_replica("sim")))', server.url], {
      env: { ...process.env, PYTHONPATH: path.join(repoRoot, 'python-runtime') },
      encoding: 'utf8',
    });
    expect(JSON.parse(py)).toMatchObject({ replica_id: 1, replica_model_uid: 'sim-1', status: 'READY' });
    const replicas = (await api.get('/v1/models/sim/replicas')).body as Array<{ replica_id: number; pid: number }>;
    expect(replicas.map((r) => r.replica_id)).toEqual([0, 1]);
    const removedPid = replicas[1]!.pid;

    // Two streams, one per replica (round robin); removing replica 1 waits for its call.
    const streams = [0, 1].map(() => readSse(server.url, '/v1/chat/completions', { model: 'sim', messages, max_tokens: 25, stream: true }));
    await waitFor(async () => ((await api.get('/v1/models/sim/replicas')).body as Array<{ in_flight: number }>).every((r) => r.in_flight > 0), 10_000);
    const removing = request(server.url, 'DELETE', '/v1/models/sim/replicas/1');
    // A second DELETE while it drains finds it gone: one caller removed it.
    await waitFor(async () => ((await api.get('/v1/models/sim/replicas')).body as Array<{ replica_id: number; status: string }>).some((r) => r.replica_id === 1 && r.status === 'TERMINATING'), 10_000);
    const again = await request(server.url, 'DELETE', '/v1/models/sim/replicas/1');
    expect([again.status, again.body.error?.code]).toEqual([404, 'replica_not_found']);
    const removed = await removing;
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ result: true, remaining_replicas: 1 });
    for (const s of await Promise.all(streams)) {
      expect(s.data.at(-1)).toBe('[DONE]');
      expect(jsonEvents(s).filter((e) => e.choices?.[0]?.delta?.content)).toHaveLength(25);
    }
    expect(((await api.get('/v1/models/sim/replicas')).body as Array<{ replica_id: number }>).map((r) => r.replica_id)).toEqual([0]);
    expect(() => process.kill(removedPid, 0)).toThrow();
    expect((await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 2 })).status).toBe(200);

    const last = await request(server.url, 'DELETE', '/v1/models/sim/replicas/0');
    expect(last.status).toBe(400);
    expect(last.body.error.code).toBe('last_replica');
    expect((await request(server.url, 'DELETE', '/v1/models/sim/replicas/7')).status).toBe(404);
    // Only digits name a replica: ' ' and '0x0' are not replica 0.
    for (const id of ['%20', '0x0', '-0', '1e0', '+0', '0.0']) {
      const odd = await request(server.url, 'DELETE', `/v1/models/sim/replicas/${id}`);
      expect([odd.status, odd.body.error?.param], id).toEqual([400, 'replica_id']);
    }
    expect((await api.post('/v1/models/nope/replicas', {})).status).toBe(404);
  }, 60_000);

  it('stops the call of a client that leaves before its answer, and records no failure', async () => {
    const eventsBefore = ((await api.get('/v1/models/sim/events')).body as unknown[]).length;
    const controller = new AbortController();
    const left = fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'left-early' },
      body: JSON.stringify({ model: 'sim', messages, max_tokens: 500 }),
      signal: controller.signal,
    }).catch((err: Error) => err.name);
    const inFlight = async () => ((await api.get('/v1/models/sim/replicas')).body as Array<{ in_flight: number }>).reduce((n, r) => n + r.in_flight, 0);
    expect(await waitFor(async () => (await inFlight()) > 0, 10_000)).toBe(true);
    controller.abort();
    expect(await left).toBe('AbortError');
    // 500 tokens at 20 ms would take 10 s: the call ends at once instead.
    expect(await waitFor(async () => (await inFlight()) === 0, 3_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    const errors = server.logs.filter((l) => (l.level as number) >= 50 && JSON.stringify(l).includes('left-early'));
    expect(errors).toEqual([]);
    const events = ((await api.get('/v1/models/sim/events')).body as Array<{ event_type?: string; level?: string }>).slice(eventsBefore);
    expect(JSON.stringify(events)).not.toContain('ERROR');
  });

  it('stops the other choices of a request when one of them fails', async () => {
    // A list of prompts is one call per prompt (docs/openai-parameters.md); the second is
    // past the simulator's context, and the first would take 10 s (500 tokens at 20 ms).
    const res = await api.post('/v1/completions', { model: 'sim', prompt: ['hi', 'word '.repeat(200_000)], max_tokens: 500 });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('inference_invalid_input');
    const inFlight = async () => ((await api.get('/v1/models/sim/replicas')).body as Array<{ in_flight: number }>).reduce((n, r) => n + r.in_flight, 0);
    expect(await waitFor(async () => (await inFlight()) === 0, 3_000)).toBe(true);
  });

  it('answers text with a lone surrogate (valid JSON, no UTF-8) with U+FFFD in its place, not a call that never ends', async () => {
    // JSON.stringify writes the lone half of an emoji as the escape "\\ud83d", as a client that cut a string in two would send it.
    const echoed = await api.post('/v1/completions', { model: 'sim', prompt: 'cut \ud83d', echo: true, max_tokens: 1 });
    expect(echoed.status, echoed.text).toBe(200);
    expect(echoed.body.choices[0].text).toBe('cut \ufffdalpha ');
    const long = await api.post('/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: `${'word '.repeat(200)}\udc00` }], max_tokens: 1 });
    expect(long.status, long.text).toBe(200);
    expect(long.body.usage.prompt_tokens).toBe(201);
  });

  it('starts twelve replicas at once without Node reporting a listener leak', async () => {
    const launch = await api.post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'wide', replica: 12, step_ms: 5 });
    expect(launch.status, launch.text).toBe(200);
    const replicas = (await api.get('/v1/models/wide/replicas')).body as Array<{ status: string }>;
    expect(replicas.map((r) => r.status)).toEqual(Array(12).fill('READY'));
    expect((await api.post('/v1/chat/completions', { model: 'wide', messages, max_tokens: 2 })).status).toBe(200);
    expect(server.stderr()).not.toContain('MaxListenersExceededWarning');
    expect((await request(server.url, 'DELETE', '/v1/models/wide')).status).toBe(200);
  }, 120_000);

  it('shuts down in order with DELETE /v1/clusters, stopping every runtime', async () => {
    const runtimePid = Number((await api.get('/v1/models/sim/replicas')).body[0]?.pid ?? 0);
    const res = await request(server.url, 'DELETE', '/v1/clusters');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: true });
    await waitFor(() => server.process.exitCode !== null || server.process.signalCode !== null, 30_000);
    expect(server.process.exitCode).toBe(0);
    if (runtimePid > 0) expect(() => process.kill(runtimePid, 0)).toThrow();
  }, 60_000);
});
