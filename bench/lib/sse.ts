import http from 'node:http';

// Kept-alive connections, as an OpenAI SDK keeps them: a stream timed from a fresh TCP
// connection, or through fetch() (whose own cost per request on this 2-core machine is
// about 2 ms each way), would time the client instead of the service.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export interface SseRun {
  events: any[];
  firstEventAt: number;
  firstTextAt: number;
  endedAt: number;
  startedAt: number;
}

/**
 * Reads an OpenAI-style SSE stream to its end; returns the events' JSON, when the first
 * arrived, and when the first with generated text arrived (completions `text`, chat
 * `delta.content`). Times are performance.now().
 */
export function readSse(url: string, body: unknown, via: http.Agent = agent): Promise<SseRun> {
  const payload = Buffer.from(JSON.stringify(body));
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const events: any[] = [];
    let buffer = '';
    let firstEventAt = 0;
    let firstTextAt = 0;
    const req = http.request(
      { agent: via, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (part: string) => (text += part));
          res.on('end', () => reject(new Error(`stream failed: ${res.statusCode} ${text}`)));
          return;
        }
        res.on('data', (part: string) => {
          buffer += part;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            for (const line of block.split('\n')) {
              if (!line.startsWith('data: ')) continue;
              const data = line.slice(6);
              if (firstEventAt === 0) firstEventAt = performance.now();
              if (data === '[DONE]') continue;
              const event = JSON.parse(data);
              events.push(event);
              const choice = event.choices?.[0];
              if (firstTextAt === 0 && (choice?.text || choice?.delta?.content)) firstTextAt = performance.now();
            }
          }
        });
        res.on('end', () => resolve({ events, firstEventAt, firstTextAt, endedAt: performance.now(), startedAt }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
