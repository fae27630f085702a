import { execFileSync } from 'node:child_process';
import type { TestServer } from './server.js';

/** Start a server with this in `env` to measure its heap with heapAfterFullGc(). */
export const INSPECTABLE = { NODE_OPTIONS: '--inspect=127.0.0.1:0' };

// Run in a separate Node: a WebSocket client needs Node 20's --experimental-websocket.
const CLIENT = `
const ws = new WebSocket(process.argv[1]);
const waiting = new Map();
let next = 0;
const send = (method, params = {}) => new Promise((resolve) => {
  const id = ++next;
  waiting.set(id, resolve);
  ws.send(JSON.stringify({ id, method, params }));
});
ws.onmessage = (event) => {
  const message = JSON.parse(event.data);
  waiting.get(message.id)?.(message);
};
ws.onerror = () => process.exit(2);
ws.onopen = async () => {
  await send('HeapProfiler.collectGarbage');
  const answer = await send('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
  console.log(answer.result.result.value);
  ws.close();
};
`;

/**
 * The server's V8 heap in use right after a full garbage collection, in bytes, through
 * its inspector (started by INSPECTABLE). Unlike RSS, which follows when the collector
 * last ran, this is what the server still holds: the measure for "memory back".
 */
export function heapAfterFullGc(server: TestServer): number {
  const url = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(server.stderr())?.[1];
  if (!url) throw new Error(`the server has no inspector (start it with INSPECTABLE); stderr: ${server.stderr().slice(0, 500)}`);
  const out = execFileSync(process.execPath, ['--experimental-websocket', '--no-warnings', '--input-type=module', '-e', CLIENT, url], { encoding: 'utf8', timeout: 30_000 });
  return Number(out.trim());
}
