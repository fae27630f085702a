import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from '../integration/harness/http.js';
import { runtimePids, waitFor } from '../integration/harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { tinyLlm, type TinyLlm } from '../integration/harness/tiny-models.js';
import { ConsoleWatch, launchBrowser, screenshot, screenshotDir, type Browser } from './browser.js';

const ADMIN = { username: 'user1', password: 'pass1', key: 'sk-3sjLbdwqAhhAF' };
const LISTER_KEY = 'sk-72tkvudyGLPMi'; // user2: models:list only
const shots = screenshotDir('web-ui');

/**
 * The whole life of a model through the UI, in Debian's Chromium, against the real
 * server (auth on) and a tiny real LLM: log in, register, edit, launch and watch it
 * reach READY, cancel a launch, chat with streamed text, terminate, unregister, then
 * the 403 and 401 paths. Steps share one page and run in order.
 */
describe('the web UI in a browser', () => {
  let server: TestServer;
  let work: string;
  let tiny: TinyLlm;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;
  const api = (method: string, p: string, body?: unknown) => request(server.url, method, p, body, { authorization: `Bearer ${ADMIN.key}` });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name });

  beforeAll(async () => {
    work = await makeHome('hangar-e2e-');
    tiny = tinyLlm();
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', authFile] });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('sends a visitor without a credential to the login page, refuses a wrong password, logs in by keyboard', async () => {
    await page.goto(`${server.url}/ui/running`);
    await page.waitForURL(/\/ui\/login\?next=%2Fui%2Frunning/);
    await page.getByRole('heading', { name: 'Log in to Hangar' }).waitFor();
    await screenshot(page, shots, '01-login');

    watch.expect(401, /\/token$/);
    await page.getByLabel('Username', { exact: true }).fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill('wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Incorrect username or password' }).waitFor();
    watch.check();

    // Keyboard only: the username field has focus, Tab reaches the password, Enter submits.
    await page.getByLabel('Username', { exact: true }).fill('');
    await page.getByLabel('Username', { exact: true }).focus();
    await page.keyboard.type(ADMIN.username);
    await page.keyboard.press('Tab');
    await page.keyboard.type(ADMIN.password);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/ui\/running$/); // back where the visitor wanted to go
    await page.getByRole('heading', { name: 'Running models' }).waitFor();
    watch.check();
  });

  it('registers a custom LLM, showing the server message for a bad field first, then edits it', async () => {
    await nav('Register model').click();
    await page.waitForURL(/\/ui\/register\/LLM$/);
    await page.getByLabel('Model name').fill('tiny-chat');
    await page.getByLabel('Model family').fill('qwen2.5-instruct');
    await page.getByLabel('Size (billions)').fill('1');
    await page.getByLabel('Languages (comma separated)').fill('en');
    await page.getByRole('textbox', { name: 'Model path or URI' }).fill('relative/folder');
    watch.expect(400, /\/v1\/model_registrations\/LLM$/);
    await page.getByRole('button', { name: 'Register' }).click();
    const problem = page.getByRole('alert');
    await problem.waitFor();
    expect(await problem.textContent()).toContain('Invalid model URI relative/folder');
    watch.check();

    await page.getByRole('textbox', { name: 'Model path or URI' }).fill(tiny.path);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('status').filter({ hasText: 'Registered tiny-chat.' }).waitFor();
    await page.locator('.custom-list li[data-model="tiny-chat"]').waitFor();
    await screenshot(page, shots, '02-register');

    // Fields the form does not show, set through the API: an edit in the page must keep them
    // (it used to save the form alone: the family's template and stop words came back).
    const registered = (await api('GET', '/v1/model_registrations/LLM/tiny-chat')).body;
    const template = `${registered.chat_template as string}{# kept by the edit #}`;
    const stop = [...(registered.stop as string[]), '<|mystop|>'];
    const { is_builtin: _builtin, ...own } = registered;
    own.model_specs = own.model_specs.map(({ cache_status: _cached, ...spec }: Record<string, unknown>) => spec);
    expect((await api('PUT', '/v1/model_registrations/LLM/tiny-chat', { model: JSON.stringify({ ...own, chat_template: template, stop }), persist: true })).status).toBe(200);
    await page.reload();
    await page.locator('.custom-list li[data-model="tiny-chat"]').getByRole('link', { name: 'Edit' }).click();
    await page.waitForURL(/\/ui\/register\/LLM\/tiny-chat$/);
    await page.getByRole('heading', { name: 'Edit tiny-chat' }).waitFor();
    await expectValue(page, 'Model name', 'tiny-chat');
    await expectValue(page, 'Model family', 'qwen2.5-instruct');
    await page.getByLabel('Description').fill('edited in the browser');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/ui\/register\/LLM$/);
    // Said on the page it returns to (the notice was lost with the page it was set on).
    await page.getByRole('status').filter({ hasText: 'Saved tiny-chat.' }).waitFor();
    const saved = await api('GET', '/v1/model_registrations/LLM/tiny-chat');
    expect(saved.status).toBe(200);
    expect(saved.body.model_description).toBe('edited in the browser');
    expect(saved.body.model_specs[0].model_uri).toBe(tiny.path);
    expect(saved.body.chat_template).toBe(template);
    expect(saved.body.stop).toEqual(stop);
    watch.check();
  });

  it('launches it from its card with the engine cascade and follows the progress to READY', async () => {
    await nav('Launch model').click();
    await page.getByRole('heading', { name: 'Launch a model' }).waitFor();
    await page.getByRole('searchbox', { name: 'Search' }).fill('tiny');
    await page.getByLabel('Show').selectOption('custom');
    const card = page.locator('button.card[data-model="tiny-chat"]');
    await card.waitFor();
    expect(await page.locator('button.card').count()).toBe(1);
    await screenshot(page, shots, '03-launch-cards');
    await card.click();

    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Launch tiny-chat' }).waitFor();
    const engine = drawer.getByLabel('Engine');
    await page.waitForFunction(() => (document.querySelector('dialog select') as HTMLSelectElement | null)?.value === 'Transformers');
    expect(await engine.inputValue()).toBe('Transformers');
    expect(await drawer.getByLabel('Format').inputValue()).toBe('pytorch');
    expect(await drawer.getByLabel('Size (billions)').inputValue()).toBe('1');
    expect(await drawer.getByLabel('Quantization').inputValue()).toBe('none');
    await drawer.getByLabel('Model uid').fill('tiny-ui');
    await drawer.getByLabel('GPUs per replica').selectOption('cpu');
    const cli = await drawer.getByLabel('Command line').inputValue();
    expect(cli).toContain('hangar launch');
    expect(cli).toContain('-n tiny-chat -t LLM --model-engine Transformers -f pytorch -s 1 -q none -u tiny-ui --n-gpu none');
    // The estimate of the chosen spec, read from the model's own files (docs/on-demand.md).
    expect(await drawer.getByTestId('memory-estimate').textContent()).toMatch(/^Memory estimate: about \d+ MiB per replica on CPU$/);
    await screenshot(page, shots, '04-launch-drawer');

    // The same form kept on the on-demand list instead (loaded when a request names it).
    await drawer.getByLabel('Model uid').fill('tiny-od');
    await drawer.getByLabel('Keep alive').fill('10m');
    await drawer.getByRole('button', { name: 'Add on demand' }).click();
    await drawer.getByRole('status').filter({ hasText: 'tiny-od is on the on-demand list' }).waitFor();
    const kept = await api('GET', '/v1/on_demand/models');
    expect(kept.body.list).toMatchObject([{ model_uid: 'tiny-od', model_name: 'tiny-chat', keep_alive: '10m', n_gpu: null }]);
    expect((await api('DELETE', '/v1/on_demand/models/tiny-od')).status).toBe(200);
    await drawer.getByLabel('Keep alive').fill('');
    await drawer.getByLabel('Model uid').fill('tiny-ui');

    await drawer.getByRole('button', { name: 'Launch' }).click();
    const status = drawer.getByTestId('launch-status');
    await status.waitFor();
    await screenshot(page, shots, '05-launch-progress');
    await page.waitForFunction(() => document.querySelector('[data-testid="launch-status"]')?.textContent === 'READY', undefined, { timeout: 120_000 });
    expect(await drawer.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('100');
    await screenshot(page, shots, '06-launch-ready');
    const instances = await api('GET', '/v1/models/instances?model_uid=tiny-ui');
    expect(instances.body[0].status).toBe('READY');
    watch.check();
  }, 150_000);

  it('cancels a launch in progress', async () => {
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).first().click();
    await page.locator('button.card[data-model="tiny-chat"]').click();
    const drawer = page.getByRole('dialog');
    await page.waitForFunction(() => (document.querySelector('dialog select') as HTMLSelectElement | null)?.value === 'Transformers');
    await drawer.getByLabel('Model uid').fill('tiny-cancelled');
    await drawer.getByLabel('GPUs per replica').selectOption('cpu');
    await drawer.getByRole('button', { name: 'Launch' }).click();
    await drawer.getByRole('button', { name: 'Cancel launch' }).click();
    await page.waitForFunction(() => /^(ERROR|TERMINATED)$/.test(document.querySelector('[data-testid="launch-status"]')?.textContent ?? ''), undefined, { timeout: 60_000 });
    const instances = await api('GET', '/v1/models/instances?model_uid=tiny-cancelled');
    expect(instances.body.filter((i: { status: string }) => i.status === 'READY' || i.status === 'CREATING')).toEqual([]);
    await drawer.getByRole('button', { name: 'Close' }).first().click();
    watch.check();
  }, 90_000);

  it('chats with the running model and shows the answer as it streams', async () => {
    await page.goto(`${server.url}/ui/try/tiny-ui`);
    await page.getByRole('heading', { name: 'Chat' }).waitFor();
    await page.getByText('Settings').click();
    await page.getByLabel('Max tokens').fill('40');
    await page.getByLabel('Temperature').fill('0');
    // Every text the answer bubble shows, in order: streaming means several growing ones.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('.message.assistant:last-child .text')?.textContent ?? '';
        if (text !== '…' && text !== seen[seen.length - 1]) seen.push(text);
      }).observe(document.querySelector('.chat')!, { subtree: true, childList: true, characterData: true });
    });
    await page.getByLabel('Message').fill('Tell me a story');
    await page.keyboard.press('Enter');
    await page.getByTestId('finish-reason').waitFor({ timeout: 60_000 });
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen.filter((t) => t.length > 0));
    const answer = seen[seen.length - 1]!;
    expect(seen.length, `texts seen: ${JSON.stringify(seen)}`).toBeGreaterThan(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.startsWith(seen[i - 1]!)).toBe(true);
    // The same request without streaming gives the same text (greedy): the page shows what the model said.
    const whole = await api('POST', '/v1/chat/completions', { model: 'tiny-ui', messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 40, temperature: 0 });
    expect(answer).toBe(whole.body.choices[0].message.content);
    await screenshot(page, shots, '07-try-chat');
    watch.check();
  }, 90_000);

  it('lists the running model with replicas and events, and terminates it after confirmation', async () => {
    await nav('Running models').click();
    const row = page.locator('tr[data-uid="tiny-ui"]');
    await row.waitFor();
    expect(await row.locator('.status').textContent()).toBe('READY');
    // Its estimate and measured memory, and the host's budget as a bar with the model in it.
    await page.waitForFunction(() => /^\d+ MiB \/ \d+ MiB$/.test(document.querySelector('tr[data-uid="tiny-ui"] td.memory')?.textContent ?? ''), undefined, { timeout: 15_000 });
    const meter = page.getByRole('meter', { name: 'Host memory budget' });
    await meter.waitFor();
    expect(Number(await meter.getAttribute('aria-valuenow'))).toBeGreaterThan(0);
    expect(await meter.locator('div[title^="tiny-ui:"]').count()).toBe(1);
    await row.getByRole('button', { name: 'Details' }).click();
    await page.locator('.instance-details li code', { hasText: 'tiny-ui-0' }).waitFor();
    await page.locator('.events li').first().waitFor();
    await screenshot(page, shots, '08-running');

    await row.getByRole('button', { name: 'Terminate' }).click();
    const confirm = page.getByRole('dialog');
    await confirm.getByRole('heading', { name: 'Terminate tiny-ui?' }).waitFor();
    await confirm.getByRole('button', { name: 'Terminate' }).click();
    await row.waitFor({ state: 'detached', timeout: 30_000 });
    expect((await api('GET', '/v1/models')).body.data.map((m: { id: string }) => m.id)).not.toContain('tiny-ui');
    await screenshot(page, shots, '09-running-after-terminate');
    // Neither the terminated model nor the cancelled launch leaves a runtime process behind.
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 0, 15_000)).toBe(true);
    watch.check();
  }, 60_000);

  it('unregisters the custom model after confirmation', async () => {
    await nav('Register model').click();
    const item = page.locator('.custom-list li[data-model="tiny-chat"]');
    await item.getByRole('button', { name: 'Unregister' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Unregister' }).click();
    await page.getByRole('status').filter({ hasText: 'Unregistered tiny-chat.' }).waitFor();
    await item.waitFor({ state: 'detached' });
    expect((await api('GET', '/v1/model_registrations/LLM/tiny-chat')).status).toBe(404);
    watch.check();
  });

  it('shows the cluster page', async () => {
    await nav('Cluster').click();
    await page.getByRole('heading', { name: 'Workers' }).waitFor();
    await page.getByText('Uptime').waitFor();
    await page.locator('td', { hasText: /^CPU \(\d+ cores\)$/ }).waitFor();
    await screenshot(page, shots, '10-cluster');
    watch.check();
  });

  it('creates a user and a limited key, shows the key once, lists its limits and usage, and revokes it', async () => {
    await nav('Users').click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    const userForm = page.getByRole('form', { name: 'Create a user' });
    await userForm.getByLabel('Username').fill('erin');
    await userForm.getByLabel(/^Password/).fill('a long enough password');
    await userForm.getByLabel(/^Permissions/).fill('models:list, models:read, keys:create');
    await userForm.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('cell', { name: 'erin', exact: true }).waitFor();

    await nav('API keys').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    const form = page.getByRole('form', { name: 'Create an API key' });
    await form.getByLabel('Name').fill('notebook');
    await form.getByLabel(/^Owner/).fill('erin');
    await form.getByLabel('Requests per minute').fill('7');
    await form.getByLabel('Tokens per minute').fill('5000');
    await form.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Key notebook created' });
    await dialog.waitFor();
    const key = await dialog.getByLabel('The new API key').inputValue();
    expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    await screenshot(page, shots, '10a-key-created');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await dialog.waitFor({ state: 'detached' });

    // The key works, and its use shows in the table; the key itself never does.
    expect((await request(server.url, 'GET', '/v1/models', undefined, { authorization: `Bearer ${key}` })).status).toBe(200);
    const row = page.getByRole('row').filter({ hasText: 'notebook' });
    await row.getByRole('cell', { name: '7 / 5000 / —' }).waitFor();
    await row.getByRole('cell', { name: 'erin' }).waitFor();
    expect(await page.content()).not.toContain(key);
    await screenshot(page, shots, '10b-keys');

    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await request(server.url, 'GET', '/v1/models', undefined, { authorization: `Bearer ${key}` })).status).toBe(401);
    watch.check();
    // The next test logs out from the cluster page and expects to come back to it.
    await nav('Cluster').click();
    await page.getByRole('heading', { name: 'Workers' }).waitFor();
  });

  it('logs out, and a user without a permission is told which one is missing (403)', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/ui\/login/);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await page.getByRole('radio', { name: 'API key' }).check();
    await page.getByRole('textbox', { name: 'API key' }).fill(LISTER_KEY);
    // Back on the page the user logged out from; its admin-only parts say so in place.
    watch.expect(403, /\/v1\/cluster\/(info|version)$/);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/ui\/cluster$/);
    await page.getByTestId('forbidden').filter({ hasText: 'this needs `admin`' }).waitFor();
    await nav('Launch model').click();
    await page.locator('button.card[data-model="qwen2.5-instruct"]').click();
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Launch qwen2.5-instruct' }).waitFor();
    watch.expect(403, /\/v1\/models\?wait_ready=false$/);
    await drawer.getByRole('button', { name: 'Launch' }).click();
    const denied = drawer.getByTestId('forbidden');
    await denied.waitFor();
    expect(await denied.textContent()).toBe('Not enough permissions: this needs `models:start`.');
    await screenshot(page, shots, '11-forbidden');
    watch.check();
  });

  it('brings the login page back when the server refuses the credential (401)', async () => {
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).first().click();
    await page.evaluate(() => sessionStorage.setItem('hangar.credential', 'sk-0000000000000'));
    watch.expect(401, /\/v1\//);
    await nav('Running models').click();
    await page.waitForURL(/\/ui\/login\?next=%2Fui%2Frunning/);
    await page.getByRole('status').filter({ hasText: 'Please log in again' }).waitFor();
    await screenshot(page, shots, '12-login-after-401');
    watch.check();
  });
});

async function expectValue(page: Page, label: string, value: string): Promise<void> {
  await page.waitForFunction(
    ([l, v]) => [...document.querySelectorAll('label')].some((el) => el.firstChild?.textContent === l && el.querySelector('input')?.value === v),
    [label, value] as const,
  );
}
