import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, repoRoot, startServer, type TestServer } from './harness/server.js';
import { readSse } from './harness/sse-client.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
/** Debian's Prometheus server (scripts/system-packages-test.txt, installed by `npm run setup -- --with-test-tools`). */
const PROMETHEUS = process.env.HANGAR_PROMETHEUS ?? '/usr/bin/prometheus';
const monitoring = path.join(repoRoot, 'docker', 'monitoring');

interface Panel {
  title: string;
  targets?: Array<{ expr: string; refId: string }>;
}

/** A free loopback port (taken, then given back for Prometheus to take). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The operators' kit of issue 41 (docker/monitoring/) against a real Prometheus server:
 * the shipped scrape configuration (only the target, the key file's path and the
 * interval changed) scrapes a running service with auth on, on loopback, through a
 * bounded load of the simulator engine; then every PromQL expression of the shipped
 * Grafana dashboard must return data. Grafana itself does not run here.
 */
describe('the Grafana dashboard\'s queries against a real Prometheus', () => {
  let server: TestServer;
  let work: string;
  let prometheus: ChildProcess | undefined;
  let promUrl: string;
  let promLog = '';
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    expect(existsSync(PROMETHEUS), `${PROMETHEUS} is missing: run npm run setup -- --with-test-tools`).toBe(true);
    work = await makeHome('hangar-prometheus-');
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', authFile] });
    const launch = await request(server.url, 'POST', '/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', replica: 2, step_ms: 3, ttft_ms: 10 }, as(ADMIN_KEY));
    expect(launch.status, launch.text).toBe(200);

    // The shipped configuration, pointed at this service and a key file of this test.
    const keyFile = path.join(work, 'hangar-key');
    await writeFile(keyFile, `${ADMIN_KEY}\n`, { mode: 0o600 });
    const shipped = readFileSync(path.join(monitoring, 'prometheus.yml'), 'utf8');
    const config = shipped
      .replace('targets: ["hangar:9997"]', `targets: ["${new URL(server.url).host}"]`)
      .replace('credentials_file: /etc/prometheus/hangar-key', `credentials_file: ${keyFile}`)
      // A scrape a second, so the test needs seconds, not minutes, of load.
      .replace(/scrape_interval: \d+s/, 'scrape_interval: 1s');
    expect(config).toContain(new URL(server.url).host);
    expect(config).toContain(keyFile);
    const configFile = path.join(work, 'prometheus.yml');
    await writeFile(configFile, config);
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    await mkdir(path.join(work, 'tsdb'));
    prometheus = spawn(PROMETHEUS, [`--config.file=${configFile}`, `--storage.tsdb.path=${path.join(work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr!.on('data', (d: Buffer) => (promLog += d.toString()));
    const ready = await waitFor(async () => (await fetch(`${promUrl}/-/ready`).catch(() => null))?.ok === true, 30_000);
    expect(ready, promLog).toBe(true);
    // Prometheus hands new targets to its scrapers up to 5 s after start: the load waits for a first scrape.
    const scraping = await waitFor(async () => {
      const body = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ health: string }> } };
      return body.data.activeTargets[0]?.health === 'up';
    }, 30_000);
    expect(scraping, promLog).toBe(true);
  }, 180_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    if (prometheus && prometheus.exitCode === null) await new Promise((r) => prometheus!.once('exit', r));
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('scrapes the guarded /metrics with the key file, and every dashboard query returns data after a load', async () => {
    // A database key's use, for the per-key panel.
    const key = await request(server.url, 'POST', '/v1/admin/keys', { name: 'load' }, as(ADMIN_KEY));
    expect(key.status, key.text).toBe(201);
    // Bounded load over several scrapes: streams (time to first token, time per token) and plain calls.
    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < 5_000 && sent < 400) {
      const calls = [
        readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'go' }], max_tokens: 12, stream: true }, { headers: as(ADMIN_KEY) }),
        readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'go' }], max_tokens: 6, stream: true }, { headers: as(key.body.key) }),
        request(server.url, 'POST', '/v1/completions', { model: 'sim', prompt: 'go', max_tokens: 4 }, as(ADMIN_KEY)),
      ];
      for (const r of await Promise.all(calls)) expect(r.status).toBe(200);
      sent += calls.length;
    }
    expect(sent).toBeGreaterThan(20);
    // Two more scrapes after the load, then the target must be up (a refused key shows as down).
    await new Promise((r) => setTimeout(r, 2_500));
    const targets = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ health: string; lastError: string; scrapeUrl: string }> } };
    expect(targets.data.activeTargets).toHaveLength(1);
    expect(targets.data.activeTargets[0]!.health, targets.data.activeTargets[0]!.lastError).toBe('up');
    expect(targets.data.activeTargets[0]!.scrapeUrl).toBe(`${server.url}/metrics`);

    const dashboard = JSON.parse(readFileSync(path.join(monitoring, 'grafana', 'dashboards', 'hangar.json'), 'utf8')) as { panels: Panel[]; templating: { list: Array<{ name: string; query: { query: string } | string }> } };
    const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ref: t.refId, expr: t.expr })));
    expect(queries.length).toBeGreaterThan(15);
    const variable = dashboard.templating.list.find((v) => v.name === 'model')!;
    // The variable's own query: label_values(<metric>, model) lists the model.
    const labelQuery = typeof variable.query === 'string' ? variable.query : variable.query.query;
    const [, metric, label] = /^label_values\((\w+),\s*(\w+)\)$/.exec(labelQuery)!;
    const values = (await (await fetch(`${promUrl}/api/v1/label/${label}/values?match[]=${encodeURIComponent(metric!)}`)).json()) as { data: string[] };
    expect(values.data).toContain('sim');

    const empty: string[] = [];
    // Panels whose every query must also show the load (a positive number), not only a series of zeros.
    const moved = ['Generated tokens/s', 'Prompt tokens/s', 'Inference requests/s by status', 'Time to first token (p50, p95)', 'Time per output token (p50, p95)', 'End-to-end latency (p50, p95)', 'Finish reasons', 'Tokens/s per API key', 'Resident memory'];
    expect(queries.filter((q) => moved.includes(q.panel)).length).toBeGreaterThanOrEqual(moved.length);
    const flat: string[] = [];
    for (const q of queries) {
      // What Grafana sends for "All" and a rate interval of several scrapes.
      const expr = q.expr.replaceAll('$model', '.*').replaceAll('$__rate_interval', '1m');
      expect(expr, `${q.panel} ${q.ref}: a variable the test does not know`).not.toMatch(/\$/);
      const res = (await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { status: string; error?: string; data: { result: Array<{ value: [number, string] }> } };
      expect(res.status, `${q.panel} ${q.ref}: ${res.error}`).toBe('success');
      if (res.data.result.length === 0) empty.push(`${q.panel} ${q.ref}: ${expr}`);
      if (moved.includes(q.panel) && !res.data.result.some((r) => Number(r.value[1]) > 0)) flat.push(`${q.panel} ${q.ref}: ${expr} = ${JSON.stringify(res.data.result)}`);
    }
    expect(empty, 'queries that returned no data').toEqual([]);
    expect(flat, 'queries that did not see the load').toEqual([]);

    // And the numbers are the service's: tokens generated in the window, per model.
    const tokens = (await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent('sum by (model) (increase(hangar_generated_tokens_total{model="sim"}[1m]))')}`)).json()) as { data: { result: Array<{ value: [number, string] }> } };
    expect(Number(tokens.data.result[0]!.value[1])).toBeGreaterThan(0);
  }, 120_000);
});
