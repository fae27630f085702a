/** Load generation for the HTTP benchmarks: a sequential latency probe and autocannon for throughput. */
import http from 'node:http';
import autocannon from 'autocannon';

export interface LatencyRun {
  p50: number;
  p99: number;
  /** p50 of a response header holding milliseconds (e.g. x-hangar-overhead-ms), when asked for. */
  headerP50: number | null;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/**
 * One request at a time over one kept-alive connection, timed with performance.now():
 * the latency figure (autocannon's histogram is in whole milliseconds, too coarse for
 * a sub-millisecond target). Bounded by count and by time.
 */
export async function latencyProbe(url: string, body: unknown, options: { requests: number; warmup: number; maxSeconds: number; header?: string }): Promise<LatencyRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const payload = Buffer.from(JSON.stringify(body));
  const target = new URL(url);
  const once = (): Promise<{ ms: number; header: number | null }> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const req = http.request(
        { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': payload.length } },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
            const raw = options.header ? res.headers[options.header] : undefined;
            resolve({ ms: performance.now() - started, header: typeof raw === 'string' ? Number(raw) : null });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const deadline = Date.now() + options.maxSeconds * 1000;
  for (let i = 0; i < options.warmup; i++) await once();
  const times: number[] = [];
  const headers: number[] = [];
  while (times.length < options.requests && Date.now() < deadline) {
    const { ms, header } = await once();
    times.push(ms);
    if (header !== null) headers.push(header);
  }
  agent.destroy();
  times.sort((a, b) => a - b);
  headers.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), headerP50: headers.length > 0 ? percentile(headers, 0.5) : null };
}

export interface ThroughputRun {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** What the errors were: connection errors, timeouts, non-2xx answers by status. */
  errorDetail: string;
}

/** `connections` concurrent keep-alive connections for `seconds` (autocannon). */
export async function throughput(url: string, body: unknown, connections: number, seconds: number, headers: Record<string, string> = {}): Promise<ThroughputRun> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    connections,
    duration: seconds,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    errorDetail: `errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodeStats)}`,
  };
}
