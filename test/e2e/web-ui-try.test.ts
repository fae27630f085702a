import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePythonLauncher } from '../integration/harness/fixtures.js';
import { client } from '../integration/harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { readFileSync } from 'node:fs';
import { tinyModel, tinyVision, tinyVisionRegistration, type TinyVision } from '../integration/harness/tiny-models.js';
import { ConsoleWatch, launchBrowser, screenshot, screenshotDir, type Browser } from './browser.js';

interface TinyEncoder {
  path: string;
  dimensions: number;
  max_tokens: number;
}

const shots = screenshotDir('web-ui-try');

/**
 * The embeddings and rerank "Try it" panels against tiny real BERTs (an embedder and a
 * cross-encoder served by sentence_transformers): what the page shows is what the API
 * answers for the same input.
 */
describe('the try-it panels for embeddings, rerank and flexible models', () => {
  let server: TestServer;
  let work: string;
  let browser: Browser;
  let page: Page;
  let watch: ConsoleWatch;
  let api: ReturnType<typeof client>;
  let embedder: TinyEncoder;
  let vision: TinyVision;

  beforeAll(async () => {
    work = await makeHome('hangar-e2e-try-');
    embedder = tinyModel<TinyEncoder>('embedder');
    const cross = tinyModel<TinyEncoder>('cross-encoder');
    vision = tinyVision();
    server = await startServer();
    api = client(server.url);
    const launcher = await writePythonLauncher(work);
    const spec = (uri: string) => [{ model_format: 'pytorch', quantization: 'none', model_uri: uri }];
    const regs = await Promise.all([
      api.post('/v1/model_registrations/embedding', { model: { model_name: 'tiny-embed', dimensions: embedder.dimensions, max_tokens: embedder.max_tokens, language: ['en'], model_specs: spec(embedder.path) }, persist: false }),
      api.post('/v1/model_registrations/rerank', { model: { model_name: 'tiny-rerank', type: 'normal', max_tokens: cross.max_tokens, language: ['en'], model_specs: spec(cross.path) }, persist: false }),
      api.post('/v1/model_registrations/flexible', { model: { model_name: 'scaler', model_uri: launcher, launcher: 'python', launcher_args: { scale: 3, offset: 1 } }, persist: false }),
      api.post('/v1/model_registrations/LLM', tinyVisionRegistration('tiny-vision', vision)),
    ]);
    for (const r of regs) expect(r.status, r.text).toBe(200);
    const launches = await Promise.all([
      api.post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'embed' }),
      api.post('/v1/models', { model_name: 'tiny-rerank', model_type: 'rerank', model_uid: 'rerank' }),
      api.post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'scaler' }),
      api.post('/v1/models', { model_name: 'tiny-vision', model_engine: 'Transformers', model_uid: 'eye' }),
    ]);
    for (const l of launches) expect(l.status, l.text).toBe(200);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watch = new ConsoleWatch(page);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('embeds texts from the running models page', async () => {
    await page.goto(`${server.url}/ui/running/embedding`);
    const row = page.locator('tr[data-uid="embed"]');
    await row.getByRole('link', { name: 'Try it' }).click();
    await page.waitForURL(/\/ui\/try\/embed$/);
    await page.getByLabel('Texts (one per line)').fill('the quick brown fox\nhello');
    await page.getByRole('button', { name: 'Embed' }).click();
    const items = page.getByTestId('embeddings').locator('li');
    await items.nth(1).waitFor();
    const expected = await api.post('/v1/embeddings', { model: 'embed', input: ['the quick brown fox', 'hello'] });
    for (const [i, item] of (expected.body.data as Array<{ embedding: number[] }>).entries()) {
      const shown = await items.nth(i).textContent();
      expect(shown).toBe(`${embedder.dimensions} dimensions: [${item.embedding.slice(0, 6).map((v) => v.toFixed(4)).join(', ')}, …]`);
    }
    await screenshot(page, shots, 'try-embeddings');
    watch.check();
  });

  it('ranks documents against a query, best first', async () => {
    await page.goto(`${server.url}/ui/try/rerank`);
    const documents = ['the cat sat on the mat', 'stock markets fell today', 'a kitten sleeps on a rug'];
    await page.getByLabel('Query', { exact: true }).fill('where is the cat');
    await page.getByLabel('Documents (one per line)').fill(documents.join('\n'));
    await page.getByRole('button', { name: 'Rerank' }).click();
    const items = page.getByTestId('rerank').locator('li');
    await items.nth(2).waitFor();
    const expected = await api.post('/v1/rerank', { model: 'rerank', query: 'where is the cat', documents, return_documents: true });
    for (const [i, r] of (expected.body.results as Array<{ index: number; relevance_score: number }>).entries()) {
      expect(await items.nth(i).textContent()).toBe(`${r.relevance_score.toFixed(4)} #${r.index + 1} ${documents[r.index]}`);
    }
    await screenshot(page, shots, 'try-rerank');
    watch.check();
  });

  it('calls a flexible model with JSON arguments, and names bad JSON without calling', async () => {
    await page.goto(`${server.url}/ui/try/scaler`);
    await page.getByLabel('Arguments (JSON list)').fill('[1, 2');
    await page.getByRole('button', { name: 'Call' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not valid JSON' }).waitFor();
    await page.getByLabel('Arguments (JSON list)').fill('[[1, 2, 3]]');
    await page.getByLabel('Keyword arguments (JSON object)').fill('{"square": true}');
    await page.getByRole('button', { name: 'Call' }).click();
    const shown = JSON.parse((await page.getByTestId('flexible').textContent())!);
    expect(shown.values).toEqual([16, 49, 100]);
    await screenshot(page, shots, 'try-flexible');
    watch.check();
  });

  it('attaches an image to a chat with a vision model, and the answer is the one the API gives for the same image', async () => {
    await page.goto(`${server.url}/ui/try/eye`);
    await page.getByRole('heading', { name: 'Chat' }).waitFor();
    await page.getByText('Settings').click();
    await page.getByLabel('Max tokens').fill('8');
    await page.getByLabel('Temperature').fill('0');
    await page.getByLabel('Images').setInputFiles(vision.images.a);
    await page.getByTestId('attached-count').filter({ hasText: '1 image attached' }).waitFor();
    await page.getByLabel('Message').fill('What is this?');
    await page.keyboard.press('Enter');
    await page.getByTestId('finish-reason').waitFor({ timeout: 60_000 });
    await page.getByRole('img', { name: 'Image 1 of this message' }).waitFor();
    const shown = await page.locator('.message.assistant:last-child .text').textContent();
    const url = `data:image/png;base64,${readFileSync(vision.images.a).toString('base64')}`;
    const expected = await api.post('/v1/chat/completions', {
      model: 'eye',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text: 'What is this?' }] }],
      max_tokens: 8,
      temperature: 0,
    });
    expect(expected.status, expected.text).toBe(200);
    expect(shown).toBe(expected.body.choices[0].message.content);
    await screenshot(page, shots, 'try-vision-chat');
    watch.check();
  }, 90_000);
});
