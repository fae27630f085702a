/**
 * One load-generating process for bench/llm-relay.ts: opens STREAMS concurrent SSE
 * streams (raw node:http, no SDK: the client must not be the bottleneck), reads them
 * to the end, and prints one JSON line: tokens received (from each stream's usage),
 * each stream's token rate, and the gaps between the reads it saw.
 *
 * argv: <url> <streams> <json body>
 */
import http from 'node:http';

const [url, streamsArg, bodyArg] = process.argv.slice(2) as [string, string, string];
const streams = Number(streamsArg);
const payload = Buffer.from(bodyArg);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

interface StreamResult {
  tokens: number;
  firstAt: number;
  lastAt: number;
  failed: string | null;
}

const gaps: number[] = [];

function one(): Promise<StreamResult> {
  return new Promise((resolve) => {
    const result: StreamResult = { tokens: 0, firstAt: 0, lastAt: 0, failed: null };
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
      if (res.statusCode !== 200) result.failed = `HTTP ${res.statusCode}`;
      let tail = '';
      let last = 0;
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        const now = performance.now();
        if (last > 0) gaps.push(now - last);
        else result.firstAt = now;
        last = now;
        result.lastAt = now;
        // Only the usage chunk is parsed (the last few hundred bytes): counting is cheap.
        tail = (tail + text).slice(-600);
      });
      res.on('end', () => {
        const usage = /"completion_tokens":(\d+)/.exec(tail);
        if (usage) result.tokens = Number(usage[1]);
        else result.failed ??= `no usage in the stream's end: ${tail.slice(-200)}`;
        resolve(result);
      });
      res.on('error', (err) => {
        result.failed = String(err);
        resolve(result);
      });
    });
    req.on('error', (err) => {
      result.failed = String(err);
      resolve(result);
    });
    req.end(payload);
  });
}

const results = await Promise.all(Array.from({ length: streams }, one));
const failed = results.filter((r) => r.failed);
gaps.sort((a, b) => a - b);
const pct = (p: number): number => (gaps.length ? gaps[Math.min(gaps.length - 1, Math.floor((gaps.length * p) / 100))]! : 0);
const rates = results.filter((r) => !r.failed && r.tokens > 1 && r.lastAt > r.firstAt).map((r) => (r.tokens - 1) / ((r.lastAt - r.firstAt) / 1000));
process.stdout.write(
  `${JSON.stringify({
    tokens: results.reduce((n, r) => n + r.tokens, 0),
    failed: failed.length,
    firstFailure: failed[0]?.failed ?? null,
    meanStreamRate: rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : 0,
    gapsMs: { p50: pct(50), p90: pct(90), p99: pct(99), max: gaps.at(-1) ?? 0, count: gaps.length },
  })}\n`,
);
