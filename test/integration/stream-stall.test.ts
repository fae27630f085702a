import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortedAnswers } from './harness/finish-reasons.js';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { removeHome, startServer, type TestServer } from './harness/server.js';

/**
 * A stream whose client stops reading (a phone gone offline, a client stuck): closed
 * after HANGAR_STREAM_STALL_TIMEOUT_MS, its generation stopped. Before, it held its
 * batch slot and its model kept generating, every token buffered in the control plane.
 */
describe('a stream whose client takes nothing', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ env: { HANGAR_STREAM_STALL_TIMEOUT_MS: '1000', HANGAR_STATS_INTERVAL_S: '1' } });
    const launched = await client(server.url).post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', step_ms: 0, ttft_ms: 0, max_batch: 256 });
    expect(launched.status, launched.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  const aborted = () => abortedAnswers(server.url, 'sim');

  // One choice (stream-relay.ts), its chunks made large by their log-probabilities so the
  // buffers fill soon; and 64 choices (choices-relay.ts).
  it.each([
    ['one choice', { messages: [{ role: 'user', content: 'go' }], logprobs: true, top_logprobs: 20 }, '/v1/chat/completions'],
    ['64 choices', { prompt: 'go', n: 64 }, '/v1/completions'],
  ] as const)('with %s is closed once it has taken nothing for the stall timeout, and its generation stops', async (_what, fields, route) => {
    const { port } = new URL(server.url);
    const before = await aborted();
    const body = JSON.stringify({ model: 'sim', max_tokens: 100_000, stream: true, ...fields });
    const socket = connect(Number(port), '127.0.0.1');
    let received = 0;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // Some of the answer, then nothing more is read: the buffers fill, the server waits on a drain.
      if (received > 64 * 1024) socket.pause();
    });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    // The server's side of the connection closes (the client, reading nothing, learns
    // of it only when it reads on): its choices end as aborted, not run to max_tokens.
    const stopped = await waitFor(async () => (await aborted()) > before, 45_000);
    socket.destroy();
    await closed;
    expect(stopped).toBe(true);
    // The model serves at once.
    const next = await client(server.url).post('/v1/completions', { model: 'sim', prompt: 'go', max_tokens: 3 });
    expect(next.status, next.text).toBe(200);
  }, 90_000);
});
