import { ApiError } from './api-error';

/**
 * Reads an OpenAI-style event stream (contract §4): `data: <json>` events ending with
 * `data: [DONE]`; an event carrying `error` ends the stream with that error.
 */
export async function* readEvents<T>(response: Response): AsyncGenerator<T> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      if (data === '[DONE]') return;
      const parsed = JSON.parse(data) as { error?: { message?: string; code?: string } | string };
      if (parsed.error) {
        const e = parsed.error;
        throw new ApiError(500, typeof e === 'string' ? e : (e.message ?? 'stream failed'), typeof e === 'string' ? null : (e.code ?? null), null);
      }
      yield parsed as T;
    }
  }
}
