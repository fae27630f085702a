import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { readSse } from './harness/sse-client.js';
import { makeHome, removeHome, repoRoot, startServer, venvPython, type TestServer } from './harness/server.js';
import { tinyLlm, tinyVision, tinyLlmRegistration, tinyVisionRegistration, type TinyVision } from './harness/tiny-models.js';

const MAX_BYTES = 100_000;
const GREEDY = { max_tokens: 10, temperature: 0, ignore_eos: true };

// Vision chat through HTTP (issue 30 item 3): a tiny LLaVA built at test time and
// served by the Transformers engine through the real loading code; images as data:
// URLs, and as http URLs served by this test on loopback (HANGAR_IMAGE_FETCH=any:
// the default refuses loopback, which image-fetch.test.ts checks).
describe('vision chat on the Transformers engine', () => {
  let work: string;
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let vision: TinyVision;
  let images: http.Server;
  let imageBase: string;
  const png: Record<string, Buffer> = {};
  const dataUrl = (name: 'a' | 'b') => `data:image/png;base64,${png[name]!.toString('base64')}`;
  const ask = (text: string, ...urls: string[]) => ({
    role: 'user',
    content: [...urls.map((url) => ({ type: 'image_url', image_url: { url } })), { type: 'text', text }],
  });
  const chat = async (messages: unknown[], extra: Record<string, unknown> = GREEDY) => api.post('/v1/chat/completions', { model: 'eye', messages, ...extra });
  // transformers' own answers, computed once (a Python start costs seconds): keyed by the chat's JSON.
  const expected = new Map<string, string>();
  const chats = {
    a: () => [ask('What is in this picture?', dataUrl('a'))],
    b: () => [ask('What is in this picture?', dataUrl('b'))],
    turns: () => [ask('Compare these two.', dataUrl('a'), dataUrl('b')), { role: 'assistant', content: 'They differ.' }, ask('And now this one?', dataUrl('a'))],
    describe: () => [ask('Describe it.', dataUrl('b'))],
  };
  const reference = (messages: unknown[]): string => {
    const text = expected.get(JSON.stringify(messages));
    if (text === undefined) throw new Error('no reference computed for this chat');
    return text;
  };
  const computeReferences = (all: unknown[][]): string[] =>
    JSON.parse(execFileSync(venvPython, [path.join(repoRoot, 'test', 'fixtures', 'vision_reference.py'), vision.path, String(GREEDY.max_tokens)], {
      input: JSON.stringify(all),
      encoding: 'utf8',
      env: { ...process.env, HF_HUB_OFFLINE: '1' },
    }).trim().split('\n').pop()!);

  beforeAll(async () => {
    work = await makeHome('hangar-vision-');
    vision = tinyVision();
    png.a = readFileSync(vision.images.a);
    png.b = readFileSync(vision.images.b);
    const all = Object.values(chats).map((make) => make());
    computeReferences(all).forEach((text, i) => expected.set(JSON.stringify(all[i]), text));
    images = http.createServer((req, res) => {
      const url = req.url ?? '';
      if (url === '/a.png' || url === '/b.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(png[url[1]!]);
      if (url === '/moved') return res.writeHead(302, { location: '/b.png' }).end();
      if (url === '/big.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(MAX_BYTES + 1));
      // No length, more bytes than allowed: cut off while it streams.
      if (url === '/endless.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        for (let i = 0; i < 4; i++) res.write(Buffer.alloc(MAX_BYTES / 2));
        return res.end();
      }
      if (url === '/slow.png') return res.writeHead(200, { 'content-type': 'image/png' }).write(png.a!.subarray(0, 10)); // never ends
      if (url === '/page') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imageBase = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    server = await startServer({ env: { HANGAR_IMAGE_FETCH: 'any', HANGAR_IMAGE_MAX_BYTES: String(MAX_BYTES), HANGAR_IMAGE_FETCH_TIMEOUT_MS: '1500' } });
    api = client(server.url);
    const tiny = tinyLlm();
    for (const reg of [tinyVisionRegistration('tiny-vision', vision), tinyLlmRegistration('tiny-text', tiny.path)]) {
      const res = await api.post('/v1/model_registrations/LLM', reg);
      expect(res.status, res.text).toBe(200);
    }
    const launches = await Promise.all([
      api.post('/v1/models', { model_name: 'tiny-vision', model_engine: 'Transformers', model_uid: 'eye' }),
      api.post('/v1/models', { model_name: 'tiny-text', model_engine: 'Transformers', model_uid: 'text' }),
    ]);
    for (const launch of launches) expect(launch.status, launch.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    images?.closeAllConnections();
    images?.close();
    await removeHome(work);
  });

  it('lists the model with the vision ability', async () => {
    expect((await api.get('/v1/models/eye')).body.model_ability).toEqual(['chat', 'vision']);
  });

  it('sends the pixels to the model: two images, two answers, each transformers’ own', async () => {
    const [a, b] = await Promise.all([chats.a(), chats.b()].map((messages) => chat(messages)));
    expect(a!.status, a!.text).toBe(200);
    expect(b!.status, b!.text).toBe(200);
    const texts = [a!.body.choices[0].message.content, b!.body.choices[0].message.content];
    expect(texts[0]).not.toBe(texts[1]);
    expect(texts).toEqual([reference(chats.a()), reference(chats.b())]);
    // The image's 16 tokens (and the template's newline after it) count as prompt tokens.
    const plain = await chat([{ role: 'user', content: 'What is in this picture?' }]);
    expect(a!.body.usage.prompt_tokens).toBe(plain.body.usage.prompt_tokens + vision.image_tokens + 1);
  });

  it('takes several images per message and images in earlier turns', async () => {
    const res = await chat(chats.turns());
    expect(res.status, res.text).toBe(200);
    expect(res.body.choices[0].message.content).toBe(reference(chats.turns()));
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(3 * vision.image_tokens);
  });

  it('fetches http images (redirects followed) to the same answers as data: URLs', async () => {
    const byData = await chat([ask('Describe it.', dataUrl('b'))]);
    const byUrl = await chat([ask('Describe it.', `${imageBase}/b.png`)]);
    const moved = await chat([ask('Describe it.', `${imageBase}/moved`)]);
    for (const res of [byData, byUrl, moved]) expect(res.status, res.text).toBe(200);
    expect(byUrl.body.choices[0].message.content).toBe(byData.body.choices[0].message.content);
    expect(moved.body.choices[0].message.content).toBe(byData.body.choices[0].message.content);
  });

  it('refuses oversized, slow, missing and non-image URLs with a 400 naming the part', async () => {
    const cases: Array<[string, string, RegExp]> = [
      [`${imageBase}/big.png`, 'image_too_large', /over the limit of 100000/],
      [`${imageBase}/endless.png`, 'image_too_large', /over the limit of 100000/],
      [`${imageBase}/slow.png`, 'image_fetch_failed', /time limit/],
      [`${imageBase}/nothing.png`, 'image_fetch_failed', /HTTP 404/],
      [`${imageBase}/page`, 'image_fetch_failed', /not an image \(Content-Type text\/html\)/],
      ['ftp://example.com/a.png', 'image_url_refused', /ftp: URLs are not fetched/],
      [`data:image/png;base64,${Buffer.alloc(MAX_BYTES + 10).toString('base64')}`, 'image_too_large', /over the limit/],
      ['data:text/plain;base64,aGVsbG8=', 'invalid_field', /must hold an image/],
      ['data:image/png;base64,!!!!', 'invalid_field', /not base64/],
      ['data:image/png;base64,', 'invalid_field', /empty or not base64/],
      // Unpadded: the runtime's decoder refused it, unnamed.
      ['data:image/png;base64,AAA', 'invalid_field', /padded with = to a multiple of 4/],
    ];
    for (const [url, code, message] of cases) {
      const res = await chat([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, ask('What?', dataUrl('a'), url)]);
      expect(res.status, url).toBe(400);
      expect(res.body.error.code, url).toBe(code);
      expect(res.body.error.message, url).toMatch(message);
      expect(res.body.error.param, url).toBe('messages.2.content.1.image_url.url');
    }
    const corrupt = await chat([ask('What?', `data:image/png;base64,${png.a!.subarray(0, 60).toString('base64')}`)]);
    expect(corrupt.status).toBe(400);
    expect(corrupt.body.error.message).toMatch(/not an image this service can read/);
    expect(corrupt.body.error.param).toBe('messages.0.content.0.image_url.url');
    // OpenAI's detail values only.
    const detail = await chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl('a'), detail: 'bogus' } }] }]);
    expect([detail.status, detail.body.error.param]).toEqual([400, 'messages.0.content.0.image_url.detail']);
    // The model is still there and answers; a scheme in capitals is a data: URL too, with the same answer.
    const plain = await chat([ask('Still there?', dataUrl('a'))]);
    expect(plain.status).toBe(200);
    const shouted = await chat([ask('Still there?', dataUrl('a').replace(/^data:/, 'DATA:'))]);
    expect(shouted.status, shouted.text).toBe(200);
    expect(shouted.body.choices[0].message.content).toBe(plain.body.choices[0].message.content);
  });

  it('streams an image chat: the deltas make the same text, with usage', async () => {
    const messages = [ask('Tell me about it.', dataUrl('a'))];
    const whole = await chat(messages);
    const res = await readSse(server.url, '/v1/chat/completions', { model: 'eye', messages, ...GREEDY, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const chunks = res.data.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(whole.body.choices[0].message.content);
    expect(chunks.at(-1).usage).toEqual(whole.body.usage);
  });

  it('refuses images on a model without vision, and a prompt whose images overflow the context', async () => {
    const res = await api.post('/v1/chat/completions', { model: 'text', messages: [ask('What?', dataUrl('a'))], max_tokens: 2 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ability_missing');
    expect(res.body.error.param).toBe('messages');
    // 16 images of 17 tokens fill half the 512-token context; the text fills the rest.
    const many = Array.from({ length: 16 }, () => dataUrl('a'));
    const over = await chat([ask('the robot counted the stars '.repeat(60), ...many)]);
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/leaves no room in the model's context of 512 tokens/);
    const tooMany = await chat([ask('So many.', ...many, dataUrl('b'))]);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/17 images; at most 16 per request/);
  });

  it('answers the Anthropic SDK’s image blocks as the same chat', async () => {
    const sdk = new Anthropic({ baseURL: server.url, apiKey: 'not-needed', maxRetries: 0 });
    const message = await sdk.messages.create({
      model: 'eye',
      max_tokens: 8,
      temperature: 0,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.b!.toString('base64') } }, { type: 'text', text: 'What is this?' }] }],
    });
    const same = await chat([ask('What is this?', dataUrl('b'))], { max_tokens: 8, temperature: 0 });
    expect(message.content).toEqual(same.body.choices[0].message.content ? [{ type: 'text', text: same.body.choices[0].message.content }] : []);
    expect(message.usage.input_tokens).toBe(same.body.usage.prompt_tokens);
    // A url source is fetched as an image_url is, with the same limits.
    const byUrl = await sdk.messages.create({
      model: 'eye',
      max_tokens: 8,
      temperature: 0,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: `${imageBase}/b.png` } }, { type: 'text', text: 'What is this?' }] }],
    });
    expect(byUrl.content).toEqual(message.content);
    const refused = await sdk.messages
      .create({ model: 'eye', max_tokens: 8, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: [{ type: 'text', text: 'What?' }, { type: 'image', source: { type: 'url', url: `${imageBase}/big.png` } }] }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    // Named by its block (chat's index, after the system prompt, was one more; its field image_url.url).
    const error = (refused as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { param?: string; message: string } };
    expect(error.error.param).toBe('messages.2.content.1.source');
    // The runtime's own refusal (an unreadable image) too.
    const corrupt = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'eye', max_tokens: 8, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: Buffer.from('not a png').toString('base64') } }] }] }),
    });
    const corruptBody = (await corrupt.json()) as { error: { param: string; message: string } };
    expect([corrupt.status, corruptBody.error.param]).toEqual([400, 'messages.0.content.0.source']);
    expect(corruptBody.error.message).toMatch(/^messages\.0\.content\.0/);
  });

  it('answers the Responses API’s input_image parts (data: and http) as the same chat', async () => {
    const sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
    const respond = (url: string) =>
      sdk.responses.create({
        model: 'eye',
        max_output_tokens: 8,
        temperature: 0,
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: url, detail: 'auto' }, { type: 'input_text', text: 'What is this?' }] }],
      });
    const response = await respond(dataUrl('a'));
    const same = await chat([ask('What is this?', dataUrl('a'))], { max_tokens: 8, temperature: 0 });
    expect(response.output_text).toBe(same.body.choices[0].message.content);
    expect(response.usage!.input_tokens).toBe(same.body.usage.prompt_tokens);
    expect((await respond(`${imageBase}/a.png`)).output_text).toBe(response.output_text);
    // The other image: what chat answers for it (two images, two answers: the test above).
    const other = await chat([ask('What is this?', dataUrl('b'))], { max_tokens: 8, temperature: 0 });
    expect((await respond(dataUrl('b'))).output_text).toBe(other.body.choices[0].message.content);
    const refused = await respond(`${imageBase}/big.png`).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    // Named by its input item and part (it was `input` alone).
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input.0.content.0.image_url');
  });

  it('takes image_url parts from the OpenAI Python SDK', async () => {
    const script = `
import json, sys
from openai import OpenAI
c = OpenAI(base_url=sys.argv[1] + "/v1", api_key="not-needed", max_retries=0)
r = c.chat.completions.create(model="eye", max_tokens=${GREEDY.max_tokens}, temperature=0, extra_body={"ignore_eos": True},
    messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": sys.argv[2], "detail": "low"}}, {"type": "text", "text": "Describe it."}]}])
print(json.dumps(r.choices[0].message.content))
`;
    // Not execFileSync: this process serves the image the service fetches.
    const { stdout } = await promisify(execFile)(venvPython, ['-c', script, server.url, `${imageBase}/b.png`], { encoding: 'utf8', timeout: 60_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(out).toBe(reference(chats.describe()));
  });
});
