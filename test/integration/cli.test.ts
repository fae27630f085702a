import { stat, writeFile, readdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printable } from '../../src/cli/terminal.js';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { runCli, startCli } from './harness/cli.js';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyLlm, type TinyLlm } from './harness/tiny-models.js';

const USER2_KEY = 'sk-72tkvudyGLPMi';
const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';

/** A loopback port nobody listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const tinyDefinition = (name: string, llm: TinyLlm) => ({
  version: 2,
  model_name: name,
  model_family: 'qwen2.5-instruct',
  model_lang: ['en'],
  model_ability: ['chat', 'generate'],
  context_length: 512,
  model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: llm.path }],
});

// The real `hangar` binary as a subprocess against a real server with the tiny real LLM.
describe('hangar CLI against a server without auth', () => {
  let server: TestServer;
  let work: string;
  let llm: TinyLlm;
  let env: Record<string, string>;
  const cli = (args: string[], input?: string) => runCli(args, { env, ...(input !== undefined ? { input } : {}) });

  beforeAll(async () => {
    work = await makeHome('hangar-cli-');
    llm = tinyLlm();
    await writeFile(path.join(work, 'tiny-chat.json'), JSON.stringify(tinyDefinition('tiny-chat', llm)));
    await writeFile(path.join(work, 'broken.json'), '{"model_name": ');
    server = await startServer();
    // The endpoint comes from the environment here; -e is tested below.
    env = { HANGAR_ENDPOINT: server.url, HANGAR_HOME: path.join(work, 'cli-home') };
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('registers from a file and shows it in registrations (table and --json)', async () => {
    const reg = await cli(['register', '-t', 'LLM', '-f', path.join(work, 'tiny-chat.json')]);
    expect(reg.stderr).toBe('');
    expect(reg.code).toBe(0);
    expect(reg.stdout).toContain('Registered tiny-chat (LLM)');

    const table = await cli(['registrations', '-t', 'LLM']);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^Type\s+Name\s+Language\s+Ability\s+Is-built-in$/);
    const row = lines.find((l) => l.includes('tiny-chat'))!;
    expect(row).toMatch(/^LLM\s+tiny-chat\s+en\s+chat, generate\s+false$/);
    // Aligned: every row's Name column starts where the header's does.
    expect(row.indexOf('tiny-chat')).toBe(lines[0]!.indexOf('Name'));

    const json = await cli(['registrations', '-t', 'LLM', '--json']);
    const items = JSON.parse(json.stdout) as Array<{ model_name: string; is_builtin: boolean }>;
    expect(items.find((i) => i.model_name === 'tiny-chat')?.is_builtin).toBe(false);
    expect(items.some((i) => i.is_builtin)).toBe(true);
  });

  it('says which engines can run the model', async () => {
    const res = await cli(['engine', '-n', 'tiny-chat']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/tiny-chat\s+Transformers\s+pytorch\s+1\s+none/);
    const json = JSON.parse((await cli(['engine', '-n', 'tiny-chat', '-en', 'transformers', '--json'])).stdout) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['Transformers']);
    // Image and audio entries have no quantizations: the table said the server was of another shape.
    const ocr = await cli(['engine', '-t', 'image', '-n', 'tesseract-ocr']);
    expect(ocr.code, ocr.stderr).toBe(0);
    expect(ocr.stdout).toMatch(/tesseract-ocr\s+tesseract/);
    // Without -t the name is an LLM's; another type's name says which.
    const untyped = await cli(['engine', '-n', 'tesseract-ocr']);
    expect([untyped.code, untyped.stderr.trim()]).toEqual([1, 'hangar: "tesseract-ocr" is a model of type image, not an LLM: hangar engine -t image -n tesseract-ocr']);
    // Xinference's habits: its memory calculator says where the figure is; `cached` takes its --worker-ip.
    const calc = await cli(['cal-model-mem', '-s', '7', '-q', '4-bit', '-n', 'qwen', '-f', 'gptq', '-c', '16384']);
    expect(calc.code).toBe(1);
    expect(calc.stderr).toContain('`hangar engine -n <name> --json` shows each engine entry\'s memory_estimate');
    const cached = await cli(['cached', '--worker-ip', '127.0.0.1']);
    expect(cached.code, cached.stderr).toBe(0);
  });

  it('refuses a bad definition file and a missing engine before calling the server', async () => {
    const broken = await cli(['register', '-f', path.join(work, 'broken.json')]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^hangar: the model definition .*broken\.json is not valid JSON/);
    const missing = await cli(['register', '-f', path.join(work, 'nope.json')]);
    expect(missing.stderr).toContain('cannot read the model definition');
    const noEngine = await cli(['launch', '-n', 'tiny-chat']);
    expect(noEngine.code).toBe(1);
    expect(noEngine.stderr).toContain('--model-engine (-en) is required for LLM models');
  });

  it('launches with a progress bar to READY, lists, chats, generates and terminates', async () => {
    const launch = await cli(['launch', '-n', 'tiny-chat', '-en', 'Transformers', '-u', 'chat1', '--n-gpu', 'none', '-s', '1', '-f', 'pytorch', '-q', 'none', '--env', 'HANGAR_CLI_TEST', 'yes']);
    expect(launch.stderr).toContain('Launching chat1 [');
    expect(launch.stderr).toMatch(/100% \| READY/);
    expect(launch.code, launch.stderr).toBe(0);
    expect(launch.stdout.trim()).toBe('Model uid: chat1');

    const table = await cli(['list']);
    expect(table.code).toBe(0);
    const [header, rule, row] = table.stdout.split('\n');
    expect(header).toMatch(/^UID\s+Type\s+Name\s+Engine\s+Format\s+Size \(in billions\)\s+Quantization\s+Replica$/);
    expect(rule).toMatch(/^-+( +-+)+$/);
    expect(row).toMatch(/^chat1\s+LLM\s+tiny-chat\s+Transformers\s+pytorch\s+1\s+none\s+1$/);
    const listed = JSON.parse((await cli(['list', '--json'])).stdout) as Array<{ id: string; model_name: string }>;
    expect(listed.map((m) => [m.id, m.model_name])).toEqual([['chat1', 'tiny-chat']]);

    // One chat turn, streamed, compared with the server's own greedy answer to the same turn.
    const greedy = { temperature: 0, max_tokens: 8 };
    const direct = await client(server.url).post('/v1/chat/completions', { model: 'chat1', messages: [{ role: 'user', content: 'Hello there' }], ...greedy });
    expect(direct.status, direct.text).toBe(200);
    const chat = await cli(['chat', '--model-uid', 'chat1', '--temperature', '0', '--max_tokens', '8'], 'Hello there\n');
    expect(chat.code, chat.stderr).toBe(0);
    // Control characters of the random model's text are written out (src/cli/terminal.ts).
    expect(chat.stdout).toBe(`${printable(direct.body.choices[0].message.content)}\n`);

    const completion = await client(server.url).post('/v1/completions', { model: 'chat1', prompt: 'Once upon a time', ...greedy });
    const generate = await cli(['generate', '-u', 'chat1', '--temperature', '0', '--max-tokens', '8', '--no-stream'], 'Once upon a time\n');
    expect(generate.code, generate.stderr).toBe(0);
    expect(generate.stdout).toBe(`${printable(completion.body.choices[0].text)}\n`);

    const stop = await cli(['terminate', '--model-uid', 'chat1']);
    expect(stop.code, stop.stderr).toBe(0);
    expect((await cli(['list'])).stdout).toBe('No running models.\n');
    expect(JSON.parse((await cli(['list', '--json'])).stdout)).toEqual([]);

    const again = await cli(['terminate', '--model-uid', 'chat1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('hangar: Model not found in the model list, uid: chat1 (HTTP 404)\n');
  }, 180_000);

  it('Ctrl-C during a launch asks, and "y" cancels it on the server', async () => {
    const run = startCli(['launch', '-n', 'tiny-chat', '-en', 'Transformers', '-u', 'cancelled', '--n-gpu', 'none'], { env });
    // Loading the runtime (torch import) takes seconds: interrupt once the bar is up.
    expect(await waitFor(() => run.stderr().includes('Launching cancelled'), 30_000)).toBe(true);
    run.child.kill('SIGINT');
    expect(await waitFor(() => run.stderr().includes('Cancel the launch of cancelled? [y/N]'), 10_000)).toBe(true);
    run.child.stdin!.end('y\n');
    const result = await run.done;
    expect(result.stderr).toContain('hangar: the launch of cancelled was cancelled');
    expect(result.code).toBe(130);
    const [instance] = (await client(server.url).get('/v1/models/instances?model_uid=cancelled')).body as Array<{ status: string }>;
    expect(instance?.status).toBe('ERROR');
  }, 60_000);

  it('Ctrl-C during a launch, answered "n", goes on following it to READY', async () => {
    const run = startCli(['launch', '-n', 'tiny-chat', '-en', 'Transformers', '-u', 'kept', '--n-gpu', 'none'], { env });
    expect(await waitFor(() => run.stderr().includes('Launching kept'), 30_000)).toBe(true);
    run.child.kill('SIGINT');
    expect(await waitFor(() => run.stderr().includes('Cancel the launch of kept? [y/N]'), 10_000)).toBe(true);
    run.child.stdin!.end('n\n');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Model uid: kept\n');
    expect((await client(server.url).delete('/v1/models/kept')).status).toBe(200);
  }, 60_000);

  it('reports a failed launch with the server reason, and unregisters', async () => {
    const bad = await cli(['launch', '-n', 'no-such-model', '-en', 'Transformers']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^hangar: .*no-such-model.* \(HTTP 404\)\n$/);

    const un = await cli(['unregister', '-t', 'LLM', '-n', 'tiny-chat']);
    expect(un.code, un.stderr).toBe(0);
    const items = JSON.parse((await cli(['registrations', '--json'])).stdout) as Array<{ model_name: string }>;
    expect(items.some((i) => i.model_name === 'tiny-chat')).toBe(false);
  });

  it('names the endpoint it could not reach, without a stack unless --debug', async () => {
    const port = await closedPort();
    const res = await cli(['list', '-e', `http://127.0.0.1:${port}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`hangar: cannot reach the Hangar server at http://127.0.0.1:${port} (ECONNREFUSED); is it running? Choose another with -e/--endpoint or HANGAR_ENDPOINT\n`);
    const debug = await cli(['list', '-e', `http://127.0.0.1:${port}`, '--debug']);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('lists vLLM\'s families (vllm-models), and stop-cluster asks, then stops the server (Xinference\'s verbs)', async () => {
    const families = await cli(['vllm-models', '--json']);
    expect(families.code, families.stderr).toBe(0);
    const { chat, generate } = JSON.parse(families.stdout) as { chat: string[]; generate: string[] };
    expect(chat.length).toBeGreaterThan(0);
    expect(generate.length).toBeGreaterThan(0);
    expect((await cli(['vllm-models'])).stdout).toContain(`vLLM supported chat model families: ${chat.join(', ')}`);

    const declined = await cli(['stop-cluster'], 'n\n');
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.stdout).toContain(`This command will stop the Hangar server at ${server.url}`);
    expect(declined.stdout).toContain('Nothing stopped.');
    expect((await client(server.url).get('/v1/models')).status).toBe(200);

    const stopped = await cli(['stop-cluster', '--check']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('Cluster stopped: true\n');
    expect(await waitFor(() => server.process.exitCode !== null || server.process.signalCode !== null, 30_000)).toBe(true);
  }, 60_000);
});

describe('hangar CLI against a server with auth', () => {
  let server: TestServer;
  let work: string;
  let cliHome: string;
  let env: Record<string, string>;
  const cli = (args: string[], extraEnv: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extraEnv } });

  beforeAll(async () => {
    work = await makeHome('hangar-cli-auth-');
    const configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', configFile] });
    cliHome = path.join(work, 'cli-home');
    env = { HANGAR_HOME: cliHome };
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('tells a user without a credential how to log in (401)', async () => {
    const res = await cli(['list', '-e', server.url]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`hangar: not authenticated at ${server.url} (Not authenticated): log in with \`hangar login\` or pass --api-key\n`);
  });

  it('names the missing permission (403)', async () => {
    const res = await cli(['launch', '-e', server.url, '-ak', USER2_KEY, '-n', 'whatever', '-t', 'embedding']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('permission denied');
    expect(res.stderr).toContain('`models:start`');
    // HANGAR_API_KEY works the same as -ak.
    expect((await cli(['list', '-e', server.url], { HANGAR_API_KEY: USER2_KEY })).stdout).toBe('No running models.\n');
  });

  it('logs in, saves the token with mode 0600, and later commands use it', async () => {
    const wrong = await cli(['login', '-e', server.url, '--username', 'user1', '--password', 'nope']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(`hangar: login to ${server.url} failed: incorrect username or password\n`);

    // The password from stdin, out of `ps` and the shell's history.
    const login = await runCli(['login', '-e', server.url, '--username', 'user1', '--password-stdin'], { env, input: 'pass1\n' });
    expect(login.code, login.stderr).toBe(0);
    const neither = await cli(['login', '-e', server.url, '--username', 'user1']);
    expect([neither.code, neither.stderr]).toEqual([1, 'hangar: give the password with --password or --password-stdin\n']);
    // An empty stdin, or both ways at once, is said here, not sent as a login that fails (counted and audited).
    const empty = await runCli(['login', '-e', server.url, '--username', 'user1', '--password-stdin'], { env, input: '' });
    expect([empty.code, empty.stderr]).toEqual([1, 'hangar: --password-stdin read no password: the first line of stdin is empty\n']);
    const both = await runCli(['login', '-e', server.url, '--username', 'user1', '--password', 'pass1', '--password-stdin'], { env, input: 'pass1\n' });
    expect([both.code, both.stderr]).toEqual([1, 'hangar: give the password with --password or with --password-stdin, not both\n']);
    const files = await readdir(path.join(cliHome, 'auth'));
    expect(files).toHaveLength(1);
    expect((await stat(path.join(cliHome, 'auth', files[0]!))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(cliHome, 'auth'))).mode & 0o777).toBe(0o700);

    // The saved token is used, for this endpoint (with or without a trailing slash).
    const list = await cli(['list', '-e', `${server.url}/`]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toBe('No running models.\n');
    // An explicit key wins over the saved token.
    const wrongKey = await cli(['list', '-e', server.url, '--api-key', 'sk-wrongapikey12']);
    expect(wrongKey.stderr).toContain('Could not validate credentials');
    expect((await cli(['list', '-e', server.url, '-ak', ADMIN_KEY])).code).toBe(0);
  });
  it('creates a key with a limit, lists it and its usage, and revokes it (the operator\'s three commands)', async () => {
    const asAdmin = ['-e', server.url, '-ak', ADMIN_KEY];
    const user = await runCli(['users', 'create', 'carol', '--password-stdin', '--permissions', 'models:list,keys:create', ...asAdmin], { env, input: 'a long enough password\n' });
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout).toMatch(/^Created user carol \(id \d+\)\.\n$/);

    const created = await cli(['keys', 'create', '--name', 'ci', '--owner', 'carol', '--rpm', '2', '--models', 'm1,m2', ...asAdmin]);
    expect(created.code, created.stderr).toBe(0);
    const key = /\n {2}(sk-[A-Za-z0-9]{48})\n/.exec(created.stdout)?.[1];
    expect(key, created.stdout).toBeDefined();
    expect(created.stdout).toContain('cannot show it again');

    expect((await cli(['list', '-e', server.url, '-ak', key!])).stdout).toBe('No running models.\n');
    const listed = await cli(['keys', 'list', '--json', ...asAdmin]);
    const row = JSON.parse(listed.stdout).find((k: { name: string }) => k.name === 'ci');
    expect(row).toMatchObject({ owner_username: 'carol', limits: { rpm: 2, tpm: null, max_parallel: null }, model_permissions: ['m1', 'm2'] });
    const table = await cli(['keys', 'list', ...asAdmin]);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+Prefix\s+Name\s+Owner\s+Enabled\s+RPM/);
    expect(table.stdout).not.toContain(key!);

    expect((await cli(['usage', ...asAdmin])).code).toBe(0);
    const badLimit = await cli(['keys', 'create', '--name', 'x', '--rpm', '-3', ...asAdmin]);
    expect(badLimit.code).not.toBe(0);
    expect(badLimit.stderr).toContain('positive whole number');

    const revoked = await cli(['keys', 'revoke', String(row.id), ...asAdmin]);
    expect(revoked.stdout).toBe(`Revoked key ${row.id}.\n`);
    expect((await cli(['list', '-e', server.url, '-ak', key!])).stderr).toContain('Could not validate credentials');
    const again = await cli(['keys', 'revoke', String(row.id), ...asAdmin]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`API key ${row.id} not found`);
  });
});
