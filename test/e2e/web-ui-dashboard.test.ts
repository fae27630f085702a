import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from '../integration/harness/http.js';
import { waitFor } from '../integration/harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { readSse } from '../integration/harness/sse-client.js';
import { ConsoleWatch, launchBrowser, screenshot, screenshotDir, type Browser } from './browser.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF'; // user1 of the auth config file: admin
const shots = screenshotDir('web-ui-dashboard');

interface DrawnSeries {
  name: string;
  data: unknown[];
}

/** What a chart holds (ECharts' own option, not pixels): each series' name and data. */
async function drawn(page: Page, chart: string): Promise<DrawnSeries[]> {
  const selector = `[data-chart="${chart}"]`;
  await page.waitForFunction((s) => {
    const el = document.querySelector(s) as (HTMLElement & { chart?: { getOption(): { series?: unknown[] } } }) | null;
    return (el?.chart?.getOption().series?.length ?? 0) > 0;
  }, selector);
  return page.evaluate((s) => {
    const el = document.querySelector(s) as HTMLElement & { chart: { getOption(): { series: Array<{ name: string; data: unknown[] }> } } };
    return el.chart.getOption().series.map((x) => ({ name: x.name, data: x.data }));
  }, selector);
}

/** Points of a time series as the chart holds them: [ms, value]. */
const points = (s: DrawnSeries) => s.data as Array<[number, number | null]>;
const sumOf = (values: Array<number | null>) => values.reduce<number>((a, v) => a + (v ?? 0), 0);

/**
 * The dashboards (issue 41, item 3) in Debian's Chromium against the real server with
 * auth on, after a bounded load on the simulator engine (a product feature for load
 * tests): every chart must hold what the stats and usage routes answered for the same
 * window, and each user sees only what their permissions let them see.
 */
describe('the web UI dashboards', () => {
  let server: TestServer;
  let work: string;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;
  const api = (method: string, p: string, body?: unknown, key = ADMIN_KEY) => request(server.url, method, p, body, { authorization: `Bearer ${key}` });
  const keys: Record<string, string> = {};

  /** Logs out (as a person would: a page that reloads with a cleared session races its own requests), then in with a key. */
  const logInWithKey = async (key: string) => {
    const logOut = page.getByRole('button', { name: 'Log out' });
    if (await logOut.isVisible()) await logOut.click();
    else await page.goto(`${server.url}/ui/login`);
    await page.waitForURL(/\/ui\/login/);
    await page.getByRole('radio', { name: 'API key' }).check();
    await page.getByRole('textbox', { name: 'API key' }).fill(key);
    await page.getByRole('button', { name: /log in/i }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/ui/login'));
  };

  beforeAll(async () => {
    work = await makeHome('hangar-e2e-dash-');
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', authFile], env: { HANGAR_STATS_INTERVAL_S: '1' } });
    const launch = await api('POST', '/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', replica: 2, step_ms: 5, ttft_ms: 20 });
    expect(launch.status, launch.text).toBe(200);
    // Two database users: alice may see the dashboards and her own keys' usage; bob only calls models.
    for (const [user, permissions] of [
      ['alice', ['models:list', 'models:read', 'keys:create', 'monitor:view']],
      ['bob', ['models:list', 'models:read', 'keys:create']],
    ] as const) {
      const created = await api('POST', '/v1/admin/users', { username: user, password: 'a long enough password', permissions });
      expect(created.status, created.text).toBe(201);
      const key = await api('POST', '/v1/admin/keys', { name: `${user}'s key`, owner: user });
      expect(key.status, key.text).toBe(201);
      keys[user] = key.body.key;
    }
    // The bounded load: 24 streamed chats in waves of 4 (alice's key, bob's, and the admin's config key).
    const callers = [keys.alice!, keys.bob!, ADMIN_KEY];
    for (let wave = 0; wave < 6; wave++) {
      const streams = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: `wave ${wave}` }], max_tokens: 8 + i * 4, stream: true }, { headers: { authorization: `Bearer ${callers[(wave + i) % 3]}` } }),
        ),
      );
      for (const s of streams) expect(s.status).toBe(200);
    }
    // Every request in a closed sample before any page reads the series.
    const settled = await waitFor(async () => {
      const s = (await api('GET', '/v1/stats/models/sim/series?window=5m')).body;
      return sumOf(s.series.requests_per_s) * s.interval_s >= 24;
    }, 15_000);
    expect(settled).toBe(true);
    browser = await launchBrowser({ width: 1280, height: 900 });
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('overview: cards, sparklines and the 30-day charts hold what the routes answered', async () => {
    await logInWithKey(ADMIN_KEY);
    await page.goto(`${server.url}/ui/dashboard`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('[data-card="models"] strong').waitFor();
    const spark = await drawn(page, 'spark-tokens-sim');
    const overview = (await api('GET', '/v1/stats/overview')).body;
    const card = async (name: string) => Number(await page.locator(`[data-card="${name}"] strong`).getAttribute('data-value'));
    expect(await card('models')).toBe(overview.models);
    expect(await card('replicas')).toBe(2);
    expect(await card('requests-today')).toBe(overview.today.requests);
    expect(await card('tokens-today')).toBe(overview.today.prompt_tokens + overview.today.completion_tokens);
    // Samples never change once taken: every point the chart and the route both have must agree.
    const sim = overview.running.find((m: { model_uid: string }) => m.model_uid === 'sim');
    const fromApi = new Map<number, number | null>(sim.sparkline.timestamps.map((t: number, i: number) => [t * 1000, sim.sparkline.generated_tokens_per_s[i]]));
    const shared = points(spark[0]!).filter(([t]) => fromApi.has(t));
    // The two reads are a moment apart: a sample may have come (or left the window) between them.
    expect(shared.length).toBeGreaterThan(Math.min(points(spark[0]!).length, fromApi.size) - 3);
    for (const [t, v] of shared) expect(v, `at ${t}`).toBe(fromApi.get(t));
    expect(sumOf(shared.map(([, v]) => v))).toBeGreaterThan(0);

    const since = new Date(Math.floor((Date.now() - 29 * 86_400_000) / 86_400_000) * 86_400_000).toISOString();
    for (const group of ['model', 'user'] as const) {
      const rows = (await api('GET', `/v1/admin/usage?from=${encodeURIComponent(since)}&bucket=day&group_by=${group}`)).body as Array<{ model?: string; user?: string; prompt_tokens: number; completion_tokens: number }>;
      const chart = await drawn(page, `usage-30d-${group}`);
      expect(chart.map((s) => s.name).sort()).toEqual([...new Set(rows.map((r) => String(r[group])))].sort());
      for (const s of chart) {
        const own = rows.filter((r) => String(r[group]) === s.name);
        expect(sumOf(s.data as number[]), `${group} ${s.name}`).toBe(own.reduce((a, r) => a + r.prompt_tokens + r.completion_tokens, 0));
      }
    }
    expect((await drawn(page, 'usage-30d-user')).map((s) => s.name).sort()).toEqual(['alice', 'anonymous', 'bob']);
    expect(await page.locator('[data-device="host"] [role="meter"]').count()).toBe(1);
    await screenshot(page, shots, '01-overview');
    watch.check();
  });

  it('model page: each chart holds the series route\'s samples, for the 5 min, 15 min and 1 h windows', async () => {
    await page.locator('tr[data-model="sim"] a').click();
    await page.waitForURL(/\/ui\/dashboard\/models\/sim$/);
    const columns: Record<string, Array<[string, string]>> = {
      tokens: [['generated', 'generated_tokens_per_s'], ['prompt', 'prompt_tokens_per_s']],
      requests: [['requests', 'requests_per_s'], ['errors', 'errors_per_s']],
      queue: [['in flight', 'in_flight'], ['queued', 'queued']],
      ttft: [['p50', 'ttft_p50_ms'], ['p95', 'ttft_p95_ms']],
      tpot: [['p50', 'tpot_p50_ms'], ['p95', 'tpot_p95_ms']],
      e2e: [['p50', 'e2e_p50_ms'], ['p95', 'e2e_p95_ms']],
    };
    for (const window of ['5m', '15m', '1h'] as const) {
      await page.getByRole('navigation', { name: 'Window' }).getByRole('link', { name: { '5m': '5 min', '15m': '15 min', '1h': '1 hour' }[window], exact: true }).click();
      await page.waitForURL(new RegExp(`window=${window}$`));
      // The page drew the answer for the window asked for (the server has run for less than
      // 5 minutes, so the three windows hold the same samples: the window itself must differ).
      await page.waitForFunction((w) => document.querySelector('section[data-window]')?.getAttribute('data-window') === String(w), { '5m': 300, '15m': 900, '1h': 3600 }[window]);
      await page.waitForFunction(() => document.querySelectorAll('[data-chart]').length >= 7);
      const charts: Record<string, DrawnSeries[]> = {};
      for (const name of [...Object.keys(columns), 'finish', 'replica-cpu', 'replica-rss']) charts[name] = await drawn(page, name);
      const answer = (await api('GET', `/v1/stats/models/sim/series?window=${window}`)).body;
      const at = new Map<number, number>(answer.timestamps.map((t: number, i: number) => [t * 1000, i]));
      for (const [chart, lines] of Object.entries(columns)) {
        for (const [label, column] of lines) {
          const series = charts[chart]!.find((s) => s.name === label)!;
          const shared = points(series).filter(([t]) => at.has(t));
          expect(shared.length, `${window} ${chart} ${label}`).toBeGreaterThan(Math.min(points(series).length, at.size) - 3);
          for (const [t, v] of shared) expect(v, `${window} ${chart} ${label} at ${t}`).toBe(answer.series[column][at.get(t)!]);
        }
      }
      // Finish reasons: the chart stacks the reasons that occurred; their counts are the route's.
      for (const s of charts.finish!) {
        for (const [t, v] of points(s).filter(([t]) => at.has(t))) expect(v).toBe(answer.finish_reasons[s.name][at.get(t)!]);
      }
      expect(charts.finish!.map((s) => s.name)).toContain('length');
      expect(charts['replica-cpu']!.map((s) => s.name).sort()).toEqual(answer.replicas.map((r: { replica: string }) => r.replica).sort());
      await screenshot(page, shots, `02-model-${window}`);
    }
    watch.check();
  });

  it('usage page: totals equal GET /v1/admin/usage for the same range; alice sees only her own key', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    const range = `from=${encodeURIComponent(`${from}T00:00:00.000Z`)}&to=${encodeURIComponent(new Date(Date.parse(`${today}T00:00:00.000Z`) + 86_400_000).toISOString())}`;
    const check = async (key: string, shot: string) => {
      await page.goto(`${server.url}/ui/usage`);
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
      await page.getByLabel('Group by', { exact: true }).selectOption('key');
      await page.getByLabel('Per', { exact: true }).selectOption('hour');
      const rows = (await api('GET', `/v1/admin/usage?${range}&bucket=hour&group_by=key`, undefined, key)).body as Array<{ key_id: number | null; requests: number; prompt_tokens: number; completion_tokens: number }>;
      expect(rows.length).toBeGreaterThan(0);
      const total = (field: 'requests' | 'prompt_tokens' | 'completion_tokens') => rows.reduce((a, r) => a + r[field], 0);
      const foot = page.locator('tfoot tr[data-group="total"] td');
      await page.waitForFunction((n) => document.querySelector('tfoot tr[data-group="total"] td')?.getAttribute('data-value') === String(n), total('requests'));
      expect(await foot.evaluateAll((tds) => tds.map((td) => Number(td.getAttribute('data-value'))))).toEqual([total('requests'), total('prompt_tokens'), total('completion_tokens'), 0]);
      const chart = await drawn(page, 'usage');
      expect(sumOf(chart.flatMap((s) => s.data as number[]))).toBe(total('prompt_tokens') + total('completion_tokens'));
      // Its tooltip shows under the page's CSP: an HTML tooltip's inline styles were each
      // refused (a console error apiece), which ran names and numbers together.
      const box = (await page.locator('[data-chart="usage"]').boundingBox())!;
      for (const x of [0.3, 0.5, 0.8]) await page.mouse.move(box.x + box.width * x, box.y + box.height * 0.6);
      await page.waitForTimeout(300);
      watch.check();
      await screenshot(page, shots, shot);
      return { names: chart.map((s) => s.name).sort(), rows };
    };
    const admin = await check(ADMIN_KEY, '03-usage-admin');
    // A range being edited (an empty end date) is named, not sent, and the page stays up.
    await page.getByLabel('To (UTC, included)').fill('');
    await page.getByRole('status').filter({ hasText: 'Choose a start and an end date' }).waitFor();
    expect(await page.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true);
    expect(admin.names.length).toBe(3); // alice's key, bob's key, and anonymous (the config file's key)
    expect(admin.names).toContain('anonymous');

    // Alice (keys:create, no keys:manage): only her own key, in the page as in the route.
    await logInWithKey(keys.alice!);
    const alice = await check(keys.alice!, '04-usage-alice');
    expect(alice.rows.length).toBeGreaterThan(0);
    expect(new Set(alice.rows.map((r) => r.key_id)).size).toBe(1);
    expect(alice.names).toEqual([`key ${alice.rows[0]!.key_id}`]);

    // The CSV download is the same query as the table.
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const file = await (await download).path();
    const csv = (await import('node:fs')).readFileSync(file!, 'utf8').trim().split('\n');
    expect(csv.length - 1).toBe(alice.rows.length);
    watch.check();
  });

  it('a model page opened before its model is launched shows it once it is (a 404 is looked at again)', async () => {
    watch.expect(404, /\/v1\/stats\/models\/late-uid\/series/);
    await page.goto(`${server.url}/ui/dashboard/models/late-uid`);
    await page.getByText(/not found/i).first().waitFor();
    const launched = await api('POST', '/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'late-uid' });
    expect(launched.status, launched.text).toBe(200);
    try {
      // Within the 10 s the page waits between looks (it stopped at the first 404 before).
      await page.locator('[data-chart="tokens"]').waitFor({ timeout: 25_000 });
    } finally {
      await api('DELETE', '/v1/models/late-uid');
    }
    // Leave the page (it keeps looking for its model) before another user logs in here.
    await page.goto(`${server.url}/ui/usage`);
    watch.check();
  }, 60_000);

  it('a page that cannot draw an answer says so in the layout, and the rest of the app goes on', async () => {
    // An answer of a shape this page does not know (a server of another version).
    await page.route('**/v1/stats/overview', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"models":1}' }));
    try {
      await page.goto(`${server.url}/ui/dashboard`);
      await page.getByTestId('page-failed').waitFor();
      expect(await page.getByTestId('page-failed').textContent()).toMatch(/could not show what the service answered/);
      // The menu still works (the whole app went blank before).
      await page.getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
    } finally {
      await page.unroute('**/v1/stats/overview');
    }
    // React reports the error it caught on the console: that one is expected here.
    expect(() => watch.check()).toThrow(/undefined/);
    // A proxy's error page is said in words, not shown as its markup.
    await page.route('**/v1/stats/overview', (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>' }));
    try {
      watch.expect(502, /\/v1\/stats\/overview/);
      await page.goto(`${server.url}/ui/dashboard`);
      const banner = page.getByTestId('error');
      await banner.waitFor();
      expect(await banner.textContent()).toMatch(/answered 502 .*with a web page/);
      expect(await banner.textContent()).not.toContain('<');
    } finally {
      await page.unroute('**/v1/stats/overview');
    }
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    watch.check();
  });

  it('a user without monitor:view is told which permission the dashboard needs', async () => {
    await logInWithKey(keys.bob!);
    watch.expect(403, /\/v1\/stats\/overview/);
    await page.goto(`${server.url}/ui/dashboard`);
    await page.getByTestId('forbidden').waitFor();
    expect(await page.getByTestId('forbidden').textContent()).toMatch(/monitor:view/);
    await screenshot(page, shots, '05-overview-forbidden');
    watch.check();
  });
});
