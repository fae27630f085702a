import http from 'node:http';

export interface SseResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The `data:` payloads in order, `[DONE]` included. */
  data: string[];
  /** True when the server closed the connection after the response (not kept alive). */
  socketClosed: boolean;
}

/**
 * A raw node:http SSE reader (no SDK in between): the test sees every event exactly as
 * framed. `stopAfter` closes the connection once that many events have arrived.
 */
export function readSse(
  baseUrl: string,
  path: string,
  body: unknown,
  options: { headers?: Record<string, string>; stopAfter?: number; agent?: http.Agent } = {},
): Promise<SseResult> {
  const url = new URL(path, baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: options.agent ?? false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...options.headers },
      },
      (res) => {
        const data: string[] = [];
        let buffer = '';
        let socketClosed = false;
        res.socket.once('close', () => {
          socketClosed = true;
        });
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          buffer += text;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            for (const line of event.split('\n')) if (line.startsWith('data: ')) data.push(line.slice(6));
            if (options.stopAfter !== undefined && data.length >= options.stopAfter) {
              req.destroy();
              resolve({ status: res.statusCode ?? 0, headers: res.headers, data, socketClosed: true });
              return;
            }
          }
        });
        res.on('end', () => {
          // Give the socket a moment to report its close (Connection: close) before answering.
          setTimeout(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, data, socketClosed }), 200);
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err) => (options.stopAfter !== undefined ? undefined : reject(err)));
    req.end(payload);
  });
}

/** The JSON events of a stream (everything but `[DONE]`). */
export function jsonEvents(result: SseResult): Array<Record<string, any>> {
  return result.data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Record<string, any>);
}
