import { readdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from './harness/cli.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome } from './harness/server.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface Peer {
  url: string;
  /** Every request it got: method, path and body. */
  seen: Array<{ method: string; url: string; body: string }>;
  /** What it answers next, by path; anything else is 404. */
  routes: Map<string, Handler>;
  server: Server;
}

async function peer(): Promise<Peer> {
  const seen: Peer['seen'] = [];
  const routes = new Map<string, Handler>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body });
      const handler = routes.get(req.url!.split('?')[0]!);
      if (handler) handler(req, res, body);
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"not here"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, routes, server };
}

const json = (value: unknown, status = 200): Handler => (_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
// An OSC 52 clipboard write, a screen clear, a carriage return and an 8-bit CSI: what a hostile server or model would send.
const ESCAPES = '\u001b]52;c;SGFja2Vk\u0007\u001b[2J\rX\u009b31m';
const RAW = /[\u001b\u0007\u009b\r]/;

/**
 * The real `hangar` binary against a server that misbehaves on purpose: redirects to
 * another origin, answers without a token, escape sequences in what it sends, pages too
 * large to hold, answers of another shape. A Hangar server does none of this, so a
 * small server on loopback plays it; what is verified is the CLI.
 */
describe('hangar CLI against a hostile server', () => {
  let hostile: Peer;
  let other: Peer;
  let home: string;
  const cli = (args: string[], input?: string) =>
    runCli([...args, '-e', hostile.url], { env: { HANGAR_HOME: home }, ...(input !== undefined ? { input } : {}), timeoutMs: 60_000 });

  beforeAll(async () => {
    [hostile, other] = await Promise.all([peer(), peer()]);
    home = await makeHome('hangar-cli-hostile-');
  });

  afterAll(async () => {
    await Promise.all([hostile, other].map((p) => p && new Promise((resolve) => p.server.close(resolve))));
    await removeHome(home);
  });

  it('never follows a redirect to another origin: the password and a launch\'s secrets stay here, and a 303 is no success', async () => {
    hostile.routes.set('/v1/cluster/auth', json({ auth: true }));
    for (const status of [307, 308]) {
      hostile.routes.set('/token', (_req, res) => res.writeHead(status, { location: `${other.url}/token` }).end());
      const login = await cli(['login', '--username', 'admin', '--password', 'hunter2-secret']);
      expect(login.code).toBe(1);
      expect(login.stderr).toContain(`redirected POST /token to ${other.url}, another server; nothing was sent there`);
    }
    hostile.routes.set('/v1/models', (_req, res) => res.writeHead(307, { location: `${other.url}/v1/models` }).end());
    const launch = await cli(['launch', '-n', 'm', '-en', 'simulator', '-ev', 'HF_TOKEN', 'hf_SECRET']);
    expect(launch.code).toBe(1);
    hostile.routes.set('/v1/models/x', (_req, res) => res.writeHead(303, { location: `${other.url}/v1/models/x` }).end());
    const terminate = await cli(['terminate', '-u', 'x']);
    expect(terminate.code).toBe(1);
    expect(terminate.stdout).not.toContain('terminated');
    expect(other.seen).toEqual([]);
    // Within the endpoint's origin a redirect is followed.
    hostile.routes.set('/v1/models/y', (_req, res) => res.writeHead(308, { location: '/v1/models/y2' }).end());
    hostile.routes.set('/v1/models/y2', json(null));
    const moved = await cli(['terminate', '-u', 'y']);
    expect(moved.code, moved.stderr).toBe(0);
    expect(hostile.seen.at(-1)).toMatchObject({ method: 'DELETE', url: '/v1/models/y2' });
  });

  it('logs in only with a token: an answer without one saves nothing, and auth must be a boolean', async () => {
    hostile.routes.set('/v1/cluster/auth', json({ auth: true }));
    hostile.routes.set('/token', json({}));
    const none = await cli(['login', '--username', 'a', '--password', 'b']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('the server answered no access_token; nothing was saved');
    expect(await readdir(path.join(home, 'auth')).catch(() => [])).toEqual([]);
    hostile.routes.set('/v1/cluster/auth', json({ auth: 'false' }));
    const odd = await cli(['login', '--username', 'a', '--password', 'b']);
    expect(odd.code).toBe(1);
    expect(odd.stderr).toContain('did not say whether it uses authentication');
  });

  it('writes escape sequences out, from model text, uids, device names and file paths alike', async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
    hostile.routes.set('/v1/chat/completions', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk(`Hello ${ESCAPES}`)}${chunk('\nsecond line\tend')}data: [DONE]\n\n`);
    });
    const chat = await cli(['chat', '-u', 'm'], 'hi\n');
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).not.toMatch(RAW);
    expect(chat.stdout).toContain('Hello \\u001b]52;c;SGFja2Vk\\u0007\\u001b[2J\\u000dX\\u009b31m\nsecond line\tend');

    const uid = `uid${ESCAPES}`;
    hostile.routes.set('/v1/models', json({ model_uid: uid }));
    hostile.routes.set('/v1/models/instances', json([{ model_uid: uid, status: 'READY' }]));
    const launch = await cli(['launch', '-n', 'm', '-en', 'simulator']);
    expect(launch.code, launch.stderr).toBe(0);
    expect(launch.stdout + launch.stderr).not.toMatch(RAW);
    expect(launch.stdout).toContain('Model uid: uid\\u001b]52');

    hostile.routes.set('/v1/cache/models/files', json({ paths: [`/cache/${ESCAPES}`] }));
    const cache = await cli(['remove-cache', '-n', 'v'], 'n\n');
    expect(cache.stdout).not.toMatch(RAW);
    expect(cache.stdout).toContain('Nothing deleted.');
  });

  it('says what a proxy\'s HTML page is, with its status, and clips long messages', async () => {
    const page = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';
    hostile.routes.set('/v1/models', (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end(page));
    const list = await cli(['list']);
    expect(list.code).toBe(1);
    expect(list.stderr).toBe('hangar: an HTML page titled "502 Bad Gateway" (a proxy\'s error page? is -e/--endpoint the Hangar server?) (HTTP 502)\n');
    hostile.routes.set('/v1/models', json({ detail: `line one\nline two ${'x'.repeat(5_000)}` }, 500));
    const long = await cli(['list']);
    expect(long.stderr).toMatch(/^hangar: line one line two x+… \(5\d{3} characters\) \(HTTP 500\)\n$/);
    expect(long.stderr.length).toBeLessThan(700);
  });

  it('stops reading an answer past 64 MiB, and a stream line past 16 MiB, instead of holding them', async () => {
    // Writes `head`, then up to `mebibytes` of 'a' as the client reads, then `tail`; stops when the client goes.
    const flood = (type: string, head: string, mebibytes: number, tail: string): Handler => (_req, res) => {
      const block = Buffer.alloc(1024 * 1024, 'a');
      res.writeHead(200, { 'content-type': type });
      res.write(head);
      let sent = 0;
      const pump = (): void => {
        while (sent < mebibytes && !res.destroyed) {
          sent++;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        res.end(tail);
      };
      res.on('close', () => (sent = mebibytes));
      pump();
    };
    hostile.routes.set('/v1/models', flood('application/json', '{"data": ["', 80, '"]}'));
    const list = await cli(['list']);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain('the answer to GET /v1/models is over 64 MiB');

    hostile.routes.set('/v1/chat/completions', flood('text/event-stream', 'data: ', 20, ''));
    const chat = await cli(['chat', '-u', 'm'], 'hi\n');
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain('a line of the stream is over 16 MiB with no end');
  });

  it('says an answer of another shape is not Hangar\'s, not JavaScript\'s words alone', async () => {
    hostile.routes.set('/v1/models', json({ data: {} }));
    const list = await cli(['list']);
    expect(list.code).toBe(1);
    expect(list.stderr).toMatch(/^hangar: the server's answer is not of the shape Hangar's API gives \(.+\); is -e\/--endpoint a Hangar server of this version\?/);
    hostile.routes.set('/v1/models', json({ model_uid: null }));
    const launch = await cli(['launch', '-n', 'm', '-en', 'simulator']);
    expect(launch.code).toBe(1);
    expect(launch.stderr).toContain('answered no model_uid (null)');
  });

  it('gives up a poll the server never answers at Ctrl-C during a launch, and asks', async () => {
    hostile.routes.set('/v1/models', json({ model_uid: 'hung' }));
    // Accepted, then silence: a hung server, or a network gone under the launch.
    const held: ServerResponse[] = [];
    hostile.routes.set('/v1/models/instances', (_req, res) => void held.push(res));
    const run = startCli(['launch', '-n', 'm', '-en', 'simulator', '-u', 'hung', '-e', hostile.url], { env: { HANGAR_HOME: home }, timeoutMs: 60_000 });
    try {
      expect(await waitFor(() => held.length > 0, 30_000)).toBe(true);
      run.child.kill('SIGINT');
      // Before, the flag was read between polls only: the CLI sat on the poll, deaf to Ctrl-C.
      expect(await waitFor(() => run.stderr().includes('Cancel the launch of hung? [y/N]'), 10_000), run.stderr()).toBe(true);
      run.child.stdin!.end();
      const result = await run.done;
      expect(result.code).toBe(130);
      expect(result.stderr).toContain('stopped following the launch of hung');
    } finally {
      for (const res of held) res.destroy();
    }
  }, 60_000);

  it('takes the endpoint from XINFERENCE_ENDPOINT, as Xinference\'s CLI does, after HANGAR_ENDPOINT', async () => {
    hostile.routes.set('/v1/models', json({ object: 'list', data: [] }));
    const viaXinference = await runCli(['list'], { env: { HANGAR_HOME: home, XINFERENCE_ENDPOINT: hostile.url } });
    expect(viaXinference.code, viaXinference.stderr).toBe(0);
    expect(viaXinference.stdout).toBe('No running models.\n');
    const both = await runCli(['list'], { env: { HANGAR_HOME: home, XINFERENCE_ENDPOINT: 'http://127.0.0.1:1', HANGAR_ENDPOINT: hostile.url } });
    expect(both.code, both.stderr).toBe(0);
  });
});
