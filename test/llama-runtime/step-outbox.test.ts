import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MessageType, batchItems, decodeMessage, type Message } from '../../src/runtime/wire.js';
import { RelayPace } from '../../src/llama-runtime/relay-pace.js';
import { StepOutbox } from '../../src/llama-runtime/step-outbox.js';

/** Every message the outbox sent, with when its frame left. */
function recordingOutbox(paceMs: number): { outbox: StepOutbox; sent: Array<{ at: number; messages: Message[] }> } {
  const sent: Array<{ at: number; messages: Message[] }> = [];
  const outbox = new StepOutbox((frame) => {
    const message = decodeMessage(frame);
    sent.push({ at: performance.now(), messages: message.type === MessageType.BATCH ? (batchItems(message.body).items as Message[]) : [message] });
  }, new RelayPace(paceMs), {});
  return { outbox, sent };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// The pace's clock and timers are the test's (a loaded machine's stall must not look like
// an interval running out); the end of a turn (setImmediate) is real.
describe('the runtime outbox at the relay pace', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends a call's first chunk at the end of the turn, holds later ones for the pace, and sends the end at once with them", async () => {
    const { outbox, sent } = recordingOutbox(40);
    outbox.push(MessageType.CHUNK, { id: 1, value: { text: 'a' } });
    await turn();
    expect(sent.map((s) => s.messages.length)).toEqual([1]); // the first token: no wait
    outbox.push(MessageType.CHUNK, { id: 1, value: { text: 'b' } });
    outbox.push(MessageType.CHUNK, { id: 1, value: { text: 'c' } });
    await turn();
    vi.advanceTimersByTime(5);
    expect(sent).toHaveLength(1); // held: the last frame left less than 40 ms ago
    outbox.push(MessageType.CHUNK, { id: 2, value: { text: 'x' } }); // another call's first chunk
    await turn();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.messages.map((m) => (m.body.value as { text: string }).text)).toEqual(['b', 'c', 'x']); // in order, one frame
    outbox.push(MessageType.CHUNK, { id: 1, value: { text: 'd' } });
    outbox.push(MessageType.END, { id: 1 });
    await turn();
    expect(sent).toHaveLength(3); // the end does not wait
    expect(sent[2]!.messages.map((m) => m.type)).toEqual([MessageType.CHUNK, MessageType.END]);
  });

  it('sends a held chunk once the pace allows, without any other push', async () => {
    const { outbox, sent } = recordingOutbox(20);
    outbox.push(MessageType.CHUNK, { id: 7, value: { text: 'first' } });
    await turn();
    const firstAt = sent[0]!.at;
    outbox.push(MessageType.CHUNK, { id: 7, value: { text: 'second' } });
    vi.advanceTimersByTime(19);
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.at - firstAt).toBe(20);
  });

  it('with pace 0 sends every turn at once, as before', async () => {
    const { outbox, sent } = recordingOutbox(0);
    for (const text of ['a', 'b', 'c']) {
      outbox.push(MessageType.CHUNK, { id: 3, value: { text } });
      await turn();
    }
    expect(sent).toHaveLength(3);
  });
});
