import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../integration/harness/http.js';
import { waitFor } from '../integration/harness/processes.js';
import { removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { ConsoleWatch, launchBrowser, screenshot, screenshotDir, type Browser } from './browser.js';

const shots = screenshotDir('web-ui-on-demand');

/**
 * The running page of a server with --on-demand (docs/on-demand.md): entries not
 * loaded are listed and can be removed; a model a request loaded shows as on demand,
 * with its memory and idle time, inside the host's budget bar. The espeak-ng engine
 * needs no download, so the load is a real one.
 */
describe('on-demand models in the web UI', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startServer({ args: ['--on-demand', '--memory-budget', '4GiB'] });
    api = client(server.url);
    for (const uid of ['speak', 'spare-voice']) {
      const added = await api.post('/v1/on_demand/models', { model_name: 'espeak-ng', model_type: 'audio', model_uid: uid });
      expect(added.status, added.text).toBe(200);
    }
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  it('lists entries not loaded, shows one a request loaded with its memory, and removes an entry', async () => {
    await page.goto(`${server.url}/ui/running`);
    const unloaded = page.getByTestId('on-demand-unloaded');
    await unloaded.locator('li[data-uid="speak"]').waitFor();
    expect(await unloaded.locator('li').count()).toBe(2);

    // A request names it: it loads, and the page shows it running, on demand.
    const speech = await api.post('/v1/audio/speech', { model: 'speak', input: 'hello there' });
    expect(speech.status).toBe(200);
    const row = page.locator('tr[data-uid="speak"]');
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('on demand');
    await page.waitForFunction(() => /^\d+ MiB \/ \d+ MiB$/.test(document.querySelector('tr[data-uid="speak"] td.memory')?.textContent ?? ''), undefined, { timeout: 15_000 });
    const meter = page.getByRole('meter', { name: 'Host memory budget' });
    expect(Number(await meter.getAttribute('aria-valuemax'))).toBe(4 * 2 ** 30);
    expect(await meter.locator('div[title^="speak:"]').count()).toBe(1);
    await screenshot(page, shots, '01-running-on-demand');

    await unloaded.locator('li[data-uid="spare-voice"]').getByRole('button', { name: 'Remove' }).click();
    expect(await waitFor(async () => (await api.get('/v1/on_demand/models')).body.list.length === 1, 10_000)).toBe(true);
    await page.waitForFunction(() => document.querySelector('[data-testid="on-demand-unloaded"]') === null, undefined, { timeout: 10_000 });
    watch.check();
  }, 60_000);
});
