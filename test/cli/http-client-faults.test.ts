import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/cli-error.js';
import { HttpClient } from '../../src/cli/http-client.js';

const CHUNK = JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' } }] });

/**
 * The CLI's failures are one line that says what happened, whatever breaks: a stream cut
 * off mid-answer, an event that is not JSON, a stream without its [DONE], a proxy's
 * HTML page. A Hangar server produces none of these on demand, so a small server on
 * loopback plays the broken peer; the client under test is the real one.
 */
describe('the CLI against a broken server', () => {
  let server: Server;
  let http: HttpClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const sse = (body: string, length = Buffer.byteLength(body)) => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': String(length) });
          res.write(body);
        };
        switch (req.url) {
          case '/ok':
            sse(`data: ${CHUNK}\n\ndata: [DONE]\n\n`);
            return void res.end();
          case '/cut':
            // Promises more than it sends, then hangs up.
            sse(`data: ${CHUNK}\n\n`, 500);
            return void setTimeout(() => res.socket?.destroy(), 20);
          case '/not-json':
            sse(`data: ${CHUNK}\n\ndata: <html>oops</html>\n\n`);
            return void res.end();
          case '/no-done':
            sse(`data: ${CHUNK}\n\n`);
            return void res.end();
          default:
            res.writeHead(200, { 'content-type': 'text/html' });
            return void res.end('<html>proxy login</html>');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    http = new HttpClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, credential: null });
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const drain = async (path: string) => {
    const chunks: unknown[] = [];
    try {
      for await (const chunk of http.stream(path, {})) chunks.push(chunk);
      return { chunks, error: null };
    } catch (err) {
      return { chunks, error: err as Error };
    }
  };

  it('yields the chunks of a whole stream', async () => {
    expect(await drain('/ok')).toEqual({ chunks: [JSON.parse(CHUNK)], error: null });
  });

  it.each([
    ['/cut', 'the stream broke off'],
    ['/not-json', 'an event of the stream is not JSON: "<html>oops</html>"'],
    ['/no-done', 'the stream ended before its [DONE]'],
  ])('answers %s with a CliError after the chunks that came', async (path, says) => {
    const { chunks, error } = await drain(path);
    expect(chunks).toHaveLength(1);
    expect(error).toBeInstanceOf(CliError);
    expect(error!.message).toContain(says);
  });

  it('refuses an endpoint without http:// or https:// the same way, whether or not it parses as a URL', async () => {
    for (const endpoint of ['localhost:9997', '127.0.0.1:9997', 'ftp://127.0.0.1:9997']) {
      const error = await new HttpClient({ endpoint, credential: null }).get('/v1/models').catch((err: Error) => err);
      expect((error as Error).message, endpoint).toBe(`the endpoint ${endpoint} is not an http:// or https:// URL; pass one like http://127.0.0.1:9997 with -e/--endpoint or HANGAR_ENDPOINT`);
    }
  });

  it('names an answer that is not JSON instead of printing a parser error', async () => {
    const error = await http.get('/v1/models').catch((err: Error) => err);
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toContain('the answer to GET /v1/models (text/html) is not JSON: "<html>proxy login</html>"');
  });
});

describe('the CLI\'s stream reader against an event with no end', () => {
  it('stops an event of many short data: lines past 16 MiB, as it stops one long line', async () => {
    const { readSseData } = await import('../../src/cli/sse-reader.js');
    const block = new TextEncoder().encode('data: x\n'.repeat(128 * 1024)); // 1 MiB of short lines, no blank line
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 40) controller.enqueue(block);
        else controller.close();
      },
    });
    const read = async () => {
      for await (const _ of readSseData(body)) void _;
    };
    await expect(read()).rejects.toThrow(/an event of the stream is over 16 MiB with no end/);
    expect(sent).toBeLessThan(40);
  });
});
