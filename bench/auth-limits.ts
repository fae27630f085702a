/**
 * Auth plus key limits (issue 18): the gateway benchmark's echo model, driven with a
 * database API key that has rpm, tpm and max_parallel limits (none of them reached),
 * against the same load on a server with authentication off. Both servers run side by
 * side and are measured in pairs of short turns, each pair in the opposite order of the
 * last (off-on, on-off, ...), and each pair gives one ratio: this VM's speed drifts by
 * 10-20% within a minute, and a pair's two turns see nearly the same machine. The
 * figures with the target are the medians of those ratios; requests per second and the
 * control plane's CPU time per request (read from /proc) are also given as medians.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cpuSeconds } from './lib/cpu-time.js';
import { throughput } from './lib/load.js';
import { report, writeResults } from './lib/report.js';
import { client, makeHome, removeHome, repoRoot, startServer, type TestServer } from './lib/server.js';

const BODY = { model: 'echo', args: [[1.5, 2.5, 3.5, 4.5]] };
const CONCURRENCY = 32;
const SECONDS = 3;
const PAIRS = 8;
const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
const fixtures = path.join(repoRoot, 'bench', 'fixtures');

async function launchEcho(server: TestServer, headers: Record<string, string>): Promise<void> {
  const post = async (p: string, body: unknown) => {
    const res = await fetch(server.url + p, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res;
  };
  await post('/v1/model_registrations/flexible', { model: { model_name: 'echo', model_uri: path.join(fixtures, 'echo_model.py'), launcher: 'python' }, persist: false });
  await post('/v1/models', { model_name: 'echo', model_type: 'flexible', model_uid: 'echo' });
}

async function measure(server: TestServer, headers: Record<string, string>): Promise<{ rps: number; cpuUsPerRequest: number }> {
  const pid = server.process.pid!;
  const before = cpuSeconds(pid);
  const load = await throughput(`${server.url}/v1/flexible/infers`, BODY, CONCURRENCY, SECONDS, headers);
  const cpu = cpuSeconds(pid) - before;
  if (load.errors > 0) throw new Error(`${load.errors} failed requests: ${load.errorDetail}`);
  return { rps: load.requestsPerSecond, cpuUsPerRequest: (cpu / (load.requestsPerSecond * SECONDS)) * 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const work = await makeHome('hangar-bench-auth-');
  const authFile = path.join(work, 'auth.json');
  await writeFile(authFile, JSON.stringify({
    auth_config: { algorithm: 'HS256', secret_key: 'b'.repeat(64), token_expire_in_minutes: 30 },
    user_config: [{ username: 'admin', password: 'bench admin password', permissions: ['admin'], api_keys: [ADMIN_KEY] }],
  }));
  const off = await startServer();
  const on = await startServer({ args: ['--auth-config', authFile] });
  try {
    await launchEcho(off, {});
    await launchEcho(on, { authorization: `Bearer ${ADMIN_KEY}` });
    const created = await client(on.url).post('/v1/admin/keys', { name: 'bench', limits: { rpm: 100_000_000, tpm: 100_000_000, max_parallel: 10_000 } }, { authorization: `Bearer ${ADMIN_KEY}` });
    if (created.status !== 201) throw new Error(`key: ${created.text}`);
    const keyed = { authorization: `Bearer ${created.body.key as string}` };
    // Warm both (JIT, connection pools) before anything counts.
    await measure(off, {});
    await measure(on, keyed);
    const offRuns: Array<{ rps: number; cpuUsPerRequest: number }> = [];
    const onRuns: Array<{ rps: number; cpuUsPerRequest: number }> = [];
    for (let i = 0; i < PAIRS; i++) {
      if (i % 2 === 0) {
        offRuns.push(await measure(off, {}));
        onRuns.push(await measure(on, keyed));
      } else {
        onRuns.push(await measure(on, keyed));
        offRuns.push(await measure(off, {}));
      }
    }
    const usage = await fetch(`${on.url}/v1/admin/usage`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json() as Promise<Array<{ requests: number }>>);
    const pairs = onRuns.map((r, i) => ({ rps: r.rps / offRuns[i]!.rps, cpu: offRuns[i]!.cpuUsPerRequest / r.cpuUsPerRequest }));
    report(`auth_limits_req_per_s_ratio: ${CONCURRENCY} connections, database key with rpm+tpm+max_parallel vs auth off, median of ${PAIRS} paired turns`, median(pairs.map((p) => p.rps)), 1, 'x', { target: '>= 0.97' });
    report('auth_limits_cp_cpu_ratio: control-plane CPU per request, auth off / auth + limits, median of the pairs', median(pairs.map((p) => p.cpu)), 1, 'x');
    report('auth_limits_req_per_s (medians)', median(onRuns.map((r) => r.rps)), median(offRuns.map((r) => r.rps)), 'req/s');
    report('auth_limits_cp_cpu_us_per_request (medians) vs auth off', median(onRuns.map((r) => r.cpuUsPerRequest)), median(offRuns.map((r) => r.cpuUsPerRequest)), 'us', { lowerIsBetter: true });
    console.log(`(pair ratios, req/s: ${pairs.map((p) => p.rps.toFixed(3)).join(' ')})`);
    console.log(`(usage recorded for the key: ${usage.reduce((n, r) => n + r.requests, 0)} requests)`);
  } finally {
    await Promise.all([off.stop(), on.stop()]);
    await Promise.all([removeHome(off.home), removeHome(on.home), removeHome(work)]);
  }
  await writeResults('auth-limits');
}

await main();
