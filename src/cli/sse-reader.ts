import { CliError } from './cli-error.js';

/** The longest line of a stream read: a chat chunk is a few hundred bytes, a long delta a few KiB. */
export const SSE_LINE_LIMIT = 16 * 1024 * 1024;

/**
 * The `data:` payloads of a server-sent event stream (contract §4: `data: {chunk}`
 * events, blank-line separated, CRLF or LF). Comment lines (`: ping`) are skipped;
 * several `data:` lines of one event are joined with newlines, as the SSE spec says.
 * Only what came since the last look is searched for a newline, so a long line costs
 * its length once, and a line past SSE_LINE_LIMIT ends the read.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let searched = 0;
  let data: string[] = [];
  let eventSize = 0;
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let start = 0;
    let newline: number;
    while ((newline = buffer.indexOf('\n', Math.max(start, searched))) >= 0) {
      const line = buffer.slice(start, newline).replace(/\r$/, '');
      start = newline + 1;
      searched = start;
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
        eventSize = 0;
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
        // One event of many short `data:` lines and no blank line grew as a long line did.
        eventSize += line.length;
        if (eventSize > SSE_LINE_LIMIT) throw new CliError(`an event of the stream is over ${SSE_LINE_LIMIT / 1024 / 1024} MiB with no end; is -e/--endpoint a Hangar server?`);
      }
    }
    buffer = buffer.slice(start);
    searched = buffer.length;
    if (buffer.length > SSE_LINE_LIMIT) throw new CliError(`a line of the stream is over ${SSE_LINE_LIMIT / 1024 / 1024} MiB with no end; is -e/--endpoint a Hangar server?`);
  }
  if (data.length > 0) yield data.join('\n');
}
