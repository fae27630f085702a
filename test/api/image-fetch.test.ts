import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE_FETCH, imageFetchFromEnv, type ImageFetchSettings } from '../../src/config/image-fetch.js';
import { fetchImage, ImageFetchError, isPublic } from '../../src/api/images-in-chat/image-fetch.js';

// The service fetches chat images itself; by default only from public addresses, so
// a request cannot make it reach loopback, a private network or cloud metadata.
describe('image fetch', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  const publicOnly: ImageFetchSettings = { ...DEFAULT_IMAGE_FETCH, timeoutMs: 2000 };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('png bytes'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => {
    server.close();
  });

  it('classifies addresses: only global unicast is public', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::']) {
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

  it('refuses credentials in URLs and schemes other than http(s)', async () => {
    for (const [url, message] of [['http://user:pw@example.com/a.png', /credentials/], ['file:///etc/passwd', /file: URLs are not fetched/], ['not a url', /not a valid URL/]] as const) {
      const error = await fetchImage(url, publicOnly).catch((e: unknown) => e);
      expect((error as Error).message, url).toMatch(message);
    }
  });

  it('reads its settings from the environment, refusing nonsense', () => {
    expect(imageFetchFromEnv({})).toEqual(DEFAULT_IMAGE_FETCH);
    expect(imageFetchFromEnv({ HANGAR_IMAGE_FETCH: 'ANY', HANGAR_IMAGE_MAX_BYTES: '1000', HANGAR_IMAGE_FETCH_TIMEOUT_MS: '500' })).toEqual({ mode: 'any', maxBytes: 1000, timeoutMs: 500 });
    expect(() => imageFetchFromEnv({ HANGAR_IMAGE_FETCH: 'private' })).toThrow(/public \(the default\), any or off/);
    expect(() => imageFetchFromEnv({ HANGAR_IMAGE_MAX_BYTES: '-1' })).toThrow(/HANGAR_IMAGE_MAX_BYTES must be a positive whole number/);
  });
});
