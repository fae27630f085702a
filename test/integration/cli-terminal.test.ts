import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './harness/cli.js';
import { abortedAnswers } from './harness/finish-reasons.js';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, repoRoot, startServer, type TestServer } from './harness/server.js';

const run = promisify(execFile);
const MAX_TOKENS = 400;

/**
 * The CLI at a terminal (a pseudo-terminal driven by test/fixtures/pty_session.py) and
 * with stdin at its end: what a person or a script does that a pipe in the other CLI
 * tests does not. The simulator streams slowly enough for a Ctrl-C to land mid-answer.
 */
describe('hangar CLI at a terminal', () => {
  let server: TestServer;
  let work: string;

  beforeAll(async () => {
    work = await makeHome('hangar-cli-tty-');
    server = await startServer({ env: { HANGAR_STATS_INTERVAL_S: '1' } });
    const launched = await client(server.url).post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'slow', step_ms: 20, ttft_ms: 0 });
    expect(launched.status, launched.text).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  const session = async (steps: Array<{ wait: string } | { send: string }>, args: string[]) => {
    const script = path.join(work, `steps-${Date.now()}.json`);
    await writeFile(script, JSON.stringify(steps));
    const { stdout } = await run('python3', [path.join(repoRoot, 'test', 'fixtures', 'pty_session.py'), script, process.execPath, path.join(repoRoot, 'bin', 'hangar.js'), ...args], { timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as { code: number; failure: string | null; output: string };
  };

  it('stops an answer at Ctrl-C and goes on with the next prompt; Ctrl-C at the prompt ends the session', async () => {
    const result = await session(
      [
        { wait: 'User: ' },
        { send: 'hello\r' },
        { wait: 'Assistant: ' },
        { wait: ' ' },
        { send: '\u0003' },
        { wait: '[interrupted]' },
        { wait: 'User: ' },
        { send: 'again\r' },
        { wait: 'Assistant: ' },
        { wait: ' ' },
        { send: '\u0003' },
        { wait: 'User: ' },
        { send: '\u0003' },
      ],
      ['chat', '-u', 'slow', '-e', server.url, '--max-tokens', String(MAX_TOKENS)],
    );
    expect(result.failure, result.output).toBeNull();
    expect(result.code, result.output).toBe(0);
    // Stopped, not run to its end: before, one Ctrl-C let the answer run on to max_tokens.
    const answers = result.output.split('Assistant: ').slice(1).map((a) => a.split('[interrupted]')[0]!);
    expect(answers).toHaveLength(2);
    for (const answer of answers) expect(answer.trim().split(/\s+/).length).toBeLessThan(MAX_TOKENS);
    // The server stopped generating: both answers ended as aborted, not run out.
    const aborted = () => abortedAnswers(server.url, 'slow');
    expect(await waitFor(async () => (await aborted()) === 2, 10_000), String(await aborted())).toBe(true);
  }, 150_000);

  it('ends quietly when its reader leaves (`| head`): no stack trace, exit 0', async () => {
    const hangar = `'${process.execPath}' '${path.join(repoRoot, 'bin', 'hangar.js')}'`;
    const { stdout, stderr } = await run('bash', ['-o', 'pipefail', '-c', `${hangar} registrations -t LLM --json -e ${server.url} 2>&1 | head -c 20; echo " rc=$?"`], { timeout: 60_000 });
    expect(stdout).toMatch(/ rc=0\n$/);
    expect(stdout + stderr).not.toContain('EPIPE');
  }, 60_000);

  it('answers "no" when stdin ends before a whole line, with the documented words and exit code', async () => {
    for (const input of ['', 'n']) {
      const declined = await runCli(['stop-cluster', '-e', server.url], { input });
      expect([declined.code, declined.stdout.includes('Nothing stopped.')], declined.stderr).toEqual([0, true]);
    }
    // Still running: nothing was stopped.
    expect((await client(server.url).get('/v1/models')).status).toBe(200);
  }, 60_000);
});
