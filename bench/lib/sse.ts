/**
 * Reads an OpenAI-style SSE stream to its end; returns the events' JSON, when the first
 * arrived, and when the first with generated text arrived (completions `text`, chat
 * `delta.content`).
 */
export async function readSse(url: string, body: unknown): Promise<{ events: any[]; firstEventAt: number; firstTextAt: number; endedAt: number; startedAt: number }> {
  const startedAt = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok || !res.body) throw new Error(`stream failed: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  const events: any[] = [];
  let buffer = '';
  let firstEventAt = 0;
  let firstTextAt = 0;
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(part, { stream: true });
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
  }
  return { events, firstEventAt, firstTextAt, endedAt: performance.now(), startedAt };
}
