import { describe, expect, it } from 'vitest';
import { ChunkQueue } from '../../src/runtime/chunk-queue.js';

describe('ChunkQueue', () => {
  it('yields pushed chunks in order, before and after the reader waits', async () => {
    const q = new ChunkQueue<number>();
    q.push(1);
    const reading = (async () => {
      const seen: number[] = [];
      for await (const v of q) seen.push(v);
      return seen;
    })();
    await Promise.resolve();
    q.push(2);
    q.push(3);
    q.end();
    expect(await reading).toEqual([1, 2, 3]);
  });

  it('rejects the reader with the failure', async () => {
    const q = new ChunkQueue<number>();
    q.push(1);
    q.fail(new Error('runtime died'));
    const it = q[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: 1, done: false });
    await expect(it.next()).rejects.toThrow('runtime died');
  });

  it('calls onReturn once when the reader stops early', async () => {
    let aborted = 0;
    const q = new ChunkQueue<number>(() => aborted++);
    q.push(1);
    q.push(2);
    for await (const v of q) if (v === 1) break;
    await q.return();
    expect(aborted).toBe(1);
  });

  it('hands over a whole frame in one read, keeps a failure behind the chunks, and ends a read in progress on return()', async () => {
    const q = new ChunkQueue<number>();
    const read = q.nextBatch();
    q.pushQuietly(1);
    q.pushQuietly(2);
    q.wake();
    expect(await read).toEqual([1, 2]);
    q.pushQuietly(3);
    q.end();
    expect(q.ended).toBe(false); // 3 is still to be read
    expect(await q.nextBatch()).toEqual([3]);
    expect(q.ended).toBe(true);
    expect(await q.nextBatch()).toEqual([]);

    const failing = new ChunkQueue<number>();
    failing.pushQuietly(7);
    failing.fail(new Error('gone'));
    expect(failing.takeQueued()).toEqual([7]);
    await expect(failing.nextBatch()).rejects.toThrow('gone');
    expect(failing.ended).toBe(false);

    let aborted = 0;
    const left = new ChunkQueue<number>(() => aborted++);
    const waiting = left.nextBatch();
    await left.return();
    expect(await waiting).toEqual([]);
    expect(aborted).toBe(1);
  });
});
