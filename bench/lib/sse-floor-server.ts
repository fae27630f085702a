/**
 * The physical floor of bench/llm-relay.ts: a bare node:http server that writes the
 * same chat.completion.chunk SSE frames Hangar writes, from an in-memory generator,
 * one token per stream every STEP_MS (one timer for all streams, like an engine step).
 * Whatever CPU it spends per token is what any Node relay must spend at least.
 *
 * argv: <step_ms>. Prints `listening <port>`. Requests: POST with {max_tokens}.
 */
import http from 'node:http';

const stepMs = Number(process.argv[2] ?? 20);
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliett', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa'];

interface Stream {
  res: http.ServerResponse;
  head: string;
  sent: number;
  max: number;
}

const open = new Set<Stream>();

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    const max = Number((JSON.parse(body) as { max_tokens?: number }).max_tokens ?? 16);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const head = `{"id":"chatcmpl-floor","created":${Math.floor(Date.now() / 1000)},"model":"floor","object":"chat.completion.chunk","choices":[{"index":0,"delta":`;
    res.write(`data: ${head}{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}],"usage":null}\n\n`);
    const stream = { res, head, sent: 0, max };
    open.add(stream);
    res.on('close', () => open.delete(stream));
  });
});

setInterval(() => {
  for (const s of open) {
    const word = `${WORDS[s.sent % WORDS.length]} `;
    s.sent++;
    let events = `data: ${s.head}${JSON.stringify({ content: word })},"finish_reason":null,"logprobs":null}],"usage":null}\n\n`;
    if (s.sent >= s.max) {
      events += `data: ${s.head}{},"finish_reason":"length","logprobs":null}],"usage":null}\n\n`;
      events += `data: {"id":"chatcmpl-floor","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":${s.max},"total_tokens":${s.max + 1}}}\n\ndata: [DONE]\n\n`;
      open.delete(s);
      s.res.end(events);
    } else {
      s.res.write(events);
    }
  }
}, stepMs);

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
