import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveImageParts } from '../../src/api/images-in-chat/image-parts.js';
import { HangarError } from '../../src/errors/hangar-error.js';
import { DEFAULT_IMAGE_FETCH, imageFetchFromEnv, type ImageFetchSettings } from '../../src/config/image-fetch.js';
import { fetchImage, ImageFetchError, isPublic } from '../../src/api/images-in-chat/image-fetch.js';

// The service fetches chat images itself; by default only from public addresses, so
// a request cannot make it reach loopback, a private network or cloud metadata.
describe('image fetch', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  let dripClosed = 0;
  const publicOnly: ImageFetchSettings = { ...DEFAULT_IMAGE_FETCH, timeoutMs: 2000 };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      if (req.url === '/600.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(600, 1));
      if (req.url === '/missing.png') return void res.writeHead(404).end();
      // A Location that is no URL, one to a data: URL, and a Content-Type with a comma.
      if (req.url === '/bad-location') return void res.writeHead(302, { location: 'http://[::1' }).end();
      if (req.url === '/to-data') return void res.writeHead(302, { location: 'data:image/png;base64,AAAA' }).end();
      if (req.url === '/odd-type.png') return void res.writeHead(200, { 'content-type': 'image/png,evil' }).end(Buffer.from('png bytes'));
      if (req.url === '/drip.png') {
        // Never ends on its own: a byte at a time until its client goes (bounded by the test's fetch timeout).
        res.writeHead(200, { 'content-type': 'image/png' });
        const timer = setInterval(() => res.write('x'), 20);
        res.on('close', () => {
          clearInterval(timer);
          dripClosed++;
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('png bytes'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => {
    server.close();
  });

  it('classifies addresses: only global unicast is public', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::', '::127.0.0.1', '::169.254.169.254', '100::1', '4000::1']) {
      expect(isPublic(address), address).toBe(false);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublic(address), address).toBe(true);
  });

  it('refuses loopback by address and by name, before a byte is sent', async () => {
    const before = hits;
    for (const url of [`http://127.0.0.1:${port}/a.png`, `http://localhost:${port}/a.png`, `http://[::1]:${port}/a.png`, `http://0x7f000001:${port}/a.png`]) {
      const error = await fetchImage(url, publicOnly).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(ImageFetchError);
      expect((error as ImageFetchError).refused, url).toBe(true);
      expect((error as Error).message, url).toMatch(/is not a public address/);
    }
    expect(hits).toBe(before);
  });

  it('fetches from loopback when allowed (any), and nothing when off', async () => {
    const image = await fetchImage(`http://127.0.0.1:${port}/a.png`, { ...publicOnly, mode: 'any' });
    expect(image).toEqual({ mediaType: 'image/png', bytes: Buffer.from('png bytes') });
    const off = await fetchImage(`http://127.0.0.1:${port}/a.png`, { ...publicOnly, mode: 'off' }).catch((e: unknown) => e);
    expect((off as ImageFetchError).refused).toBe(true);
    expect((off as Error).message).toMatch(/HANGAR_IMAGE_FETCH=off/);
  });

  it("answers a server's broken redirect or odd Content-Type as the image's failure, not a 500 or the client's data: URL", async () => {
    const any = { ...publicOnly, mode: 'any' as const };
    const bad = await fetchImage(`http://127.0.0.1:${port}/bad-location`, any).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ImageFetchError);
    expect([(bad as ImageFetchError).refused, (bad as Error).message]).toEqual([false, 'the server redirected to something that is not a URL']);
    const toData = await fetchImage(`http://127.0.0.1:${port}/to-data`, any).catch((e: unknown) => e);
    expect((toData as Error).message).toBe('the server redirected to a data: URL, which is not followed');
    expect(await fetchImage(`http://127.0.0.1:${port}/odd-type.png`, any)).toEqual({ mediaType: 'application/octet-stream', bytes: Buffer.from('png bytes') });
  });

  it('refuses credentials in URLs and schemes other than http(s)', async () => {
    for (const [url, message] of [['http://user:pw@example.com/a.png', /credentials/], ['file:///etc/passwd', /file: URLs are not fetched/], ['not a url', /not a valid URL/]] as const) {
      const error = await fetchImage(url, publicOnly).catch((e: unknown) => e);
      expect((error as Error).message, url).toMatch(message);
    }
  });

  it('holds a request\'s fetched images to twice one image together, naming the part that crosses it', async () => {
    const small: ImageFetchSettings = { mode: 'any', maxBytes: 1000, timeoutMs: 5000 };
    const ask = (...urls: string[]) => [{ role: 'user', content: urls.map((url) => ({ type: 'image_url', image_url: { url } })) }];
    const two = await resolveImageParts(ask(`http://127.0.0.1:${port}/600.png`, `http://127.0.0.1:${port}/600.png`), small);
    expect(two[0]!.content).toHaveLength(2);
    const four = await resolveImageParts(ask(...Array(4).fill(`http://127.0.0.1:${port}/600.png`)), small).catch((e: unknown) => e);
    expect(four).toBeInstanceOf(HangarError);
    expect((four as HangarError).code).toBe('image_too_large');
    expect((four as HangarError).message).toMatch(/over 2000 bytes together/);
  });

  it('stops every fetch of the request when one image fails, and when the client goes', async () => {
    // A minute: the old code held both fetches until then, past this test's own limit.
    const any: ImageFetchSettings = { mode: 'any', maxBytes: 1_000_000, timeoutMs: 60_000 };
    const ask = (...urls: string[]) => [{ role: 'user', content: urls.map((url) => ({ type: 'image_url', image_url: { url } })) }];
    const closedBefore = dripClosed;
    const failed = await resolveImageParts(ask(`http://127.0.0.1:${port}/drip.png`, `http://127.0.0.1:${port}/missing.png`), any).catch((e: unknown) => e);
    expect((failed as HangarError).code).toBe('image_fetch_failed');
    // The drip's connection is closed at once, not when its minute runs out.
    await vi.waitFor(() => expect(dripClosed).toBe(closedBefore + 1), { timeout: 3000 });
    const client = new AbortController();
    const hitsBefore = hits;
    const pending = resolveImageParts(ask(`http://127.0.0.1:${port}/drip.png`), any, client.signal).catch((e: unknown) => e);
    await vi.waitFor(() => expect(hits).toBe(hitsBefore + 1));
    client.abort();
    expect(await pending).toBeInstanceOf(HangarError);
    await vi.waitFor(() => expect(dripClosed).toBe(closedBefore + 2), { timeout: 3000 });
  });

  it('reads its settings from the environment, refusing nonsense', () => {
    expect(imageFetchFromEnv({})).toEqual(DEFAULT_IMAGE_FETCH);
    expect(imageFetchFromEnv({ HANGAR_IMAGE_FETCH: 'ANY', HANGAR_IMAGE_MAX_BYTES: '1000', HANGAR_IMAGE_FETCH_TIMEOUT_MS: '500' })).toEqual({ mode: 'any', maxBytes: 1000, timeoutMs: 500 });
    expect(() => imageFetchFromEnv({ HANGAR_IMAGE_FETCH: 'private' })).toThrow(/public \(the default\), any or off/);
    expect(() => imageFetchFromEnv({ HANGAR_IMAGE_MAX_BYTES: '-1' })).toThrow(/HANGAR_IMAGE_MAX_BYTES must be a positive whole number/);
  });
});
