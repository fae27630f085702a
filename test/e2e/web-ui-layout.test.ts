import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { makeHome, removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { ConsoleWatch, launchBrowser, screenshot, screenshotDir, type Browser } from './browser.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
const shots = screenshotDir('web-ui-layout');

/** Every page load's responses for the UI's own files, to check what the browser really got. */
function recordFiles(page: Page): Response[] {
  const seen: Response[] = [];
  page.on('response', (r) => {
    const p = new URL(r.url()).pathname;
    if (p === '/' || p.startsWith('/ui') || p.startsWith('/assets/')) seen.push(r);
  });
  return seen;
}

async function expectServedWell(files: Response[]): Promise<void> {
  const doc = files.find((r) => r.request().resourceType() === 'document');
  expect(doc, 'the page itself').toBeTruthy();
  expect(doc!.status()).toBe(200);
  expect((await doc!.allHeaders())['cache-control']).toBe('no-cache');
  const assets = files.filter((r) => new URL(r.url()).pathname.startsWith('/assets/'));
  expect(assets.map((r) => new URL(r.url()).pathname.split('.').pop()).sort()).toEqual(['css', 'js']);
  for (const asset of assets) {
    const headers = await asset.allHeaders();
    expect(asset.status(), asset.url()).toBe(200);
    expect(headers['content-encoding'], asset.url()).toBe('br');
    expect(headers['cache-control'], asset.url()).toBe('public, max-age=31536000, immutable');
  }
}

/** Nothing wider than the screen: no sideways scrolling on a phone. */
async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll, `${what}: page is ${scroll}px wide on a ${width}px screen`).toBeLessThanOrEqual(width);
}

describe('the web UI at phone width (auth on)', () => {
  let server: TestServer;
  let work: string;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;

  beforeAll(async () => {
    work = await makeHome('hangar-e2e-layout-');
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', authFile] });
    browser = await launchBrowser({ width: 390, height: 844 });
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('loads the login page and its compressed, cacheable assets without a credential', async () => {
    const files = recordFiles(page);
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Log in to Hangar' }).waitFor();
    await expectServedWell(files);
    await expectNoSidewaysScroll(page, 'login');
    await screenshot(page, shots, 'phone-01-login');
    watch.check();
  });

  it('logs in with an API key and reaches every section through the menu', async () => {
    await page.getByRole('radio', { name: 'API key' }).check();
    // A key no header can carry is said so, not in fetch's words ("non ISO-8859-1 code point").
    await page.getByRole('textbox', { name: 'API key' }).fill('sk-ключ');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'An API key is letters, digits and - _ only' }).waitFor();
    await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Launch a model' }).waitFor();
    const menu = page.getByRole('button', { name: 'Menu' });
    const sections = page.getByRole('navigation', { name: 'Sections' });
    expect(await sections.getByRole('link', { name: 'Running models' }).isVisible()).toBe(false);
    await page.locator('button.card').first().waitFor();
    await expectNoSidewaysScroll(page, 'launch');
    await screenshot(page, shots, 'phone-02-launch');

    for (const [link, heading, name] of [
      ['Running models', 'Running models', 'running'],
      ['Register model', 'Register a model', 'register'],
      ['Cluster', 'Cluster', 'cluster'],
      ['Launch model', 'Launch a model', 'launch-again'],
    ] as const) {
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await sections.getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      await page.waitForLoadState('networkidle');
      await expectNoSidewaysScroll(page, name);
      await screenshot(page, shots, `phone-03-${name}`);
    }
    watch.check();
  });

  it('opens the launch drawer full width', async () => {
    await page.locator('button.card[data-model="qwen2.5-instruct"]').click();
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Launch qwen2.5-instruct' }).waitFor();
    const box = await drawer.boundingBox();
    expect(box!.width).toBeLessThanOrEqual(390);
    expect(box!.x).toBeGreaterThanOrEqual(0);
    await screenshot(page, shots, 'phone-04-launch-drawer');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    watch.check();
  });

  it('wraps a long unbroken model name in its card and in the drawer, where it widened the page', async () => {
    const name = `my_company_finetuned_qwen2_5_coder_32b_instruct_awq_v2_final_${'x'.repeat(38)}`;
    const definition = { version: 2, model_name: name, model_lang: ['en'], model_ability: ['generate'], model_family: 'qwen2.5-instruct', model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: work }] };
    const registered = await fetch(`${server.url}/v1/model_registrations/LLM`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: definition, persist: false }) });
    expect(registered.status, await registered.text()).toBe(200);
    await page.reload();
    const card = page.locator(`button.card[data-model="${name}"]`);
    await card.waitFor();
    await expectNoSidewaysScroll(page, 'launch page with a long name');
    await card.click();
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: `Launch ${name}` }).waitFor();
    const sideways = await drawer.evaluate((d) => d.scrollWidth - d.clientWidth);
    expect(sideways, 'the drawer scrolls sideways').toBeLessThanOrEqual(0);
    await screenshot(page, shots, 'phone-05-long-name');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    watch.check();
  });
});

describe('the web UI by keyboard on a laptop (auth off)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;

  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  /** Presses Tab until `test` holds for the focused element; at most `limit` presses. */
  async function tabUntil(test: string, limit = 60): Promise<void> {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(test)) return;
    }
    throw new Error(`never focused: ${test}`);
  }

  it('opens the app without a login, its files compressed and cacheable', async () => {
    const files = recordFiles(page);
    await page.goto(server.url);
    await page.waitForURL(/\/ui\/launch\/LLM$/);
    await page.getByRole('heading', { name: 'Launch a model' }).waitFor();
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
    await expectServedWell(files);
    await screenshot(page, shots, 'laptop-01-launch');
    watch.check();
  });

  it('reaches a section, a card and its drawer with the keyboard alone', async () => {
    await page.locator('button.card').first().waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await tabUntil(`document.activeElement?.textContent === 'Running models'`);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/ui\/running$/);
    await page.getByRole('heading', { name: 'Running models' }).waitFor();

    await page.goto(`${server.url}/ui/launch/embedding`);
    await page.locator('button.card').first().waitFor();
    await tabUntil(`document.activeElement?.classList.contains('card') === true`);
    const name = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.model);
    await page.keyboard.press('Enter');
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: `Launch ${name}` }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.closest('dialog') !== null)).toBe(true);
    await screenshot(page, shots, 'laptop-02-drawer');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    watch.check();
  });

  it('keeps favourites in the browser and filters by them', async () => {
    await page.goto(`${server.url}/ui/launch/LLM`);
    const star = page.getByRole('button', { name: 'Favourite qwen3', exact: true });
    expect(await star.getAttribute('aria-pressed')).toBe('false');
    await star.click();
    expect(await star.getAttribute('aria-pressed')).toBe('true');
    await page.reload();
    await page.getByLabel('Show').selectOption('favourite');
    await page.locator('button.card[data-model="qwen3"]').waitFor();
    expect(await page.locator('button.card').count()).toBe(1);
    watch.check();
  });

  // Last: it turns authentication on for this server.
  it('shows the login page once creating the first user turns authentication on', async () => {
    await page.goto(`${server.url}/ui/users`);
    const form = page.getByRole('form', { name: 'Create a user' });
    await form.getByLabel('Username').fill('root');
    await form.getByLabel('Password (8 characters or more)').fill('password123');
    await form.getByLabel('Permissions (comma-separated)').fill('admin');
    // The page's next calls are refused: it asks again whether auth is on, and logs in.
    watch.expect(401, /.*/);
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.waitForURL(/\/ui\/login/, { timeout: 15_000 });
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    watch.check();
  });
});
