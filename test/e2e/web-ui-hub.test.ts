import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../integration/harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { startStandin, type Standin } from '../integration/harness/hub-standins.js';
import { tinyGguf, tinyLlm } from '../integration/harness/tiny-models.js';
import { ConsoleWatch, launchBrowser, screenshot, screenshotDir, type Browser } from './browser.js';

const shots = screenshotDir('web-ui-hub');

/**
 * "From the hub" on the launch page (docs/registry.md, "Hub search"): a search through
 * the service against a loopback stand-in of the hub shows each repository's files with
 * their size, memory estimate and fit, and one click launches a GGUF file by hub id,
 * followed to READY.
 */
describe('the web UI launches a model from the hub', () => {
  let hub: Standin;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;

  beforeAll(async () => {
    hub = await startStandin('hub_standin.py', { 'test-org/tiny-GGUF': path.dirname(tinyGguf().files.q8_0!), 'test-org/tiny-llm': tinyLlm().path }, ['--downloads', 'test-org/tiny-GGUF=50']);
    server = await startServer({ home: await makeHome('hangar-web-hub-'), env: { HF_HUB_OFFLINE: '', TRANSFORMERS_OFFLINE: '', HF_ENDPOINT: hub.url } });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    hub?.process.kill();
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  it('searches, shows sizes and fit, and launches a GGUF quantization with one click', async () => {
    await page.goto(`${server.url}/ui/launch/LLM`);
    await page.getByRole('link', { name: 'From the hub' }).click();
    await page.getByLabel('Search the hub').fill('tiny');
    await page.getByRole('button', { name: 'Search' }).click();
    const gguf = page.locator('li.hub-result[data-repo="test-org/tiny-GGUF"]');
    await gguf.waitFor();
    // What the page shows is what the search route answered.
    const answer = (await client(server.url).get('/v1/hub/models?search=tiny&limit=20')).body.data as Array<{ id: string; gguf: Array<{ quantization: string; fits: boolean }> }>;
    expect(await page.locator('li.hub-result').evaluateAll((items) => items.map((i) => i.getAttribute('data-repo')))).toEqual(answer.map((r) => r.id));
    const rows = gguf.locator('tbody tr');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-quantization')))).toEqual(answer[0]!.gguf.map((q) => q.quantization));
    expect(await gguf.locator('tr[data-quantization="q8_0"] td.fits').textContent()).toBe('fits');
    expect(await page.locator('li.hub-result[data-repo="test-org/tiny-llm"] tr[data-quantization="pytorch"]').count()).toBe(1);
    await screenshot(page, shots, '01-hub-search');

    await page.getByRole('button', { name: 'Launch test-org/tiny-GGUF q8_0' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="launch-status"]')?.textContent === 'READY', undefined, { timeout: 60_000 });
    await screenshot(page, shots, '02-hub-launched');
    const running = (await client(server.url).get('/v1/models/test-org--tiny-GGUF')).body;
    expect(JSON.stringify(running)).toMatch(/q8_0/);
    watch.check();
  }, 120_000);
});
