import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ImageFetchSettings } from '../../config/image-fetch.js';

/** Why an image URL gave no image; `refused`: the service would not fetch it at all. */
export class ImageFetchError extends Error {
  constructor(message: string, readonly refused = false, readonly tooLarge = false) {
    super(message);
  }
}

export interface FetchedImage {
  mediaType: string;
  bytes: Buffer;
}

const MAX_REDIRECTS = 3;

/**
 * One image over http(s), with the limits of ImageFetchSettings. Addresses are
 * checked where the connection is made (the lookup hook), so a name that resolves
 * to a public address when checked and a private one when connecting (DNS
 * rebinding) cannot slip through, and every redirect hop is checked again.
 */
/**
 * What one request's fetches share: the bytes all of them may still read (each image
 * also has its own HANGAR_IMAGE_MAX_BYTES), and a signal that stops them all (the
 * client gone, or another of its images failed).
 */
export interface FetchBudget {
  left: number;
  readonly total: number;
  signal?: AbortSignal;
}

export async function fetchImage(url: string, settings: ImageFetchSettings, budget?: FetchBudget): Promise<FetchedImage> {
  if (settings.mode === 'off') throw new ImageFetchError('fetching images from URLs is turned off on this server (HANGAR_IMAGE_FETCH=off); send the image as a data: URL', true);
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  const deadline = budget?.signal ? AbortSignal.any([timeout, budget.signal]) : timeout;
  let target = parseUrl(url);
  for (let hop = 0; ; hop++) {
    const response = await get(target, settings, deadline);
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (hop === MAX_REDIRECTS) throw new ImageFetchError(`more than ${MAX_REDIRECTS} redirects`);
      // A Location that is no URL (`http://[::1`) is the server's fault: a 400 naming the part, not a 500.
      if (!URL.canParse(response.headers.location, target.href)) throw new ImageFetchError('the server redirected to something that is not a URL');
      target = parseUrl(new URL(response.headers.location, target).href, true);
      continue;
    }
    if (status !== 200) {
      response.resume();
      throw new ImageFetchError(`the server answered HTTP ${status}`);
    }
    // Only a plain type goes into the data: URL made of it (`image/png,evil` broke that URL, and the refusal blamed the client's).
    const declared = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const mediaType = /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(declared) || declared === '' ? declared : 'application/octet-stream';
    // Servers that do not know what they hold say octet-stream; the runtime decodes or refuses it.
    if (!mediaType.startsWith('image/') && mediaType !== 'application/octet-stream' && mediaType !== '') {
      response.resume();
      throw new ImageFetchError(`not an image (Content-Type ${mediaType})`);
    }
    return { mediaType: mediaType.startsWith('image/') ? mediaType : 'application/octet-stream', bytes: await readCapped(response, settings.maxBytes, deadline, budget) };
  }
}

function parseUrl(raw: string, redirected = false): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ImageFetchError('not a valid URL', true);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ImageFetchError(redirected ? `the server redirected to a ${url.protocol} URL, which is not followed` : `${url.protocol} URLs are not fetched; use http(s) or a data: URL`, true);
  }
  if (url.username || url.password) throw new ImageFetchError('URLs with credentials are not fetched', true);
  return url;
}

function get(url: URL, settings: ImageFetchSettings, signal: AbortSignal): Promise<http.IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // Node does not look up an address literal: check it here.
  if (net.isIP(host) && settings.mode === 'public' && !isPublic(host)) return Promise.reject(privateAddress(host));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, { signal, lookup: settings.mode === 'public' ? publicLookup : undefined, headers: { accept: 'image/*', 'user-agent': 'hangar-image-fetch' } }, resolve);
    request.on('error', (error) => reject(asFetchError(error, signal)));
  });
}

function readCapped(response: http.IncomingMessage, maxBytes: number, signal: AbortSignal, budget?: FetchBudget): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    return Promise.reject(new ImageFetchError(`the image is ${declared} bytes, over the limit of ${maxBytes} (HANGAR_IMAGE_MAX_BYTES)`, false, true));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onAbort = () => response.destroy(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        reject(new ImageFetchError(`the image is over the limit of ${maxBytes} bytes (HANGAR_IMAGE_MAX_BYTES)`, false, true));
        return;
      }
      if (budget && (budget.left -= chunk.length) < 0) {
        response.destroy();
        reject(new ImageFetchError(`the request's fetched images come to over ${budget.total} bytes together (twice HANGAR_IMAGE_MAX_BYTES)`, false, true));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(Buffer.concat(chunks));
    });
    response.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(asFetchError(error, signal));
    });
  });
}

function asFetchError(error: Error, signal: AbortSignal): ImageFetchError {
  if (error instanceof ImageFetchError) return error;
  if (signal.aborted && signal.reason instanceof ImageFetchError) return signal.reason;
  if (signal.aborted) return new ImageFetchError('it did not arrive within the time limit (HANGAR_IMAGE_FETCH_TIMEOUT_MS)');
  return new ImageFetchError(error.message);
}

/** Global unicast only: no loopback, private, link-local (cloud metadata), CGNAT, multicast or reserved ranges. */
export function isPublic(address: string): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  // ipaddr.js calls every IPv6 address outside its named ranges unicast, the deprecated
  // IPv4-compatible `::127.0.0.1` included: IPv6 is public only inside 2000::/3, the
  // global unicast space.
  if (parsed.kind() === 'ipv6' && !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return false;
  return parsed.range() === 'unicast';
}

const GLOBAL_UNICAST_V6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];

function privateAddress(address: string): ImageFetchError {
  return new ImageFetchError(`${address} is not a public address; this server fetches images from public addresses only (HANGAR_IMAGE_FETCH=any allows private ones)`, true);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

function publicLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    // Any private answer refuses the name: a mixed answer is how rebinding tricks start.
    const blocked = addresses.find((a) => !isPublic(a.address));
    if (blocked) return callback(privateAddress(blocked.address) as NodeJS.ErrnoException, '');
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
