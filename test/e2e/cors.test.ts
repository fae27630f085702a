import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from '../integration/harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from '../integration/harness/server.js';
import { launchBrowser, type Browser } from './browser.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
// The simulator's first words (python-runtime/hangar_runtime/engines/simulator/text.py).
const EIGHT_WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel ';

/**
 * A browser app on another origin (a second loopback port) calls the API with an
 * Authorization header, as a web app built on an OpenAI SDK does, and reads a
 * streamed answer; a server that does not list the app's origin is refused by the
 * browser itself.
 */
describe('CORS from a page on another origin (Chromium)', () => {
  let server: TestServer;
  let closed: TestServer;
  let work: string;
  let site: http.Server;
  let siteUrl: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    work = await makeHome('hangar-cors-');
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', authFile] });
    closed = await startServer({ args: ['--cors-origins', 'http://127.0.0.1:1'] });
    const launch = await request(server.url, 'POST', '/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', step_ms: 5, ttft_ms: 0 }, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(launch.status, launch.text).toBe(200);
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another app</title><p>app</p>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(siteUrl);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => site?.close(r));
    await Promise.all([server?.stop(), closed?.stop()]);
    await Promise.all([removeHome(server.home), removeHome(closed.home), removeHome(work)]);
  });

  it('streams a chat answer to the page, with Authorization sent and x-request-id readable', async () => {
    const result = await page.evaluate(
      async ({ api, key }) => {
        const res = await fetch(`${api}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, stream: true }),
        });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let raw = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          raw += decoder.decode(value, { stream: true });
        }
        const events = raw.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
        const text = events.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? '').join('');
        return { status: res.status, requestId: res.headers.get('x-request-id'), text, last: events.at(-1) };
      },
      { api: server.url, key: ADMIN_KEY },
    );
    expect(result).toEqual({ status: 200, requestId: expect.any(String), text: EIGHT_WORDS, last: '[DONE]' });
    expect(await page.evaluate(() => location.origin)).not.toBe(new URL(server.url).origin);
  });

  it('shows the page a 401 (not a network error) when the key is wrong', async () => {
    const status = await page.evaluate(async (api) => (await fetch(`${api}/v1/models`, { headers: { authorization: 'Bearer sk-wrongwrongwro' } })).status, server.url);
    expect(status).toBe(401);
  });

  it('is refused by the browser when the server does not list the origin', async () => {
    const outcome = await page.evaluate(async (api) => {
      try {
        return `status ${(await fetch(`${api}/v1/models`)).status}`;
      } catch (err) {
        return `refused: ${(err as Error).name}`;
      }
    }, closed.url);
    expect(outcome).toBe('refused: TypeError');
  });
});
