import { describe, expect, it } from 'vitest';
import { MediaStore } from '../../src/api/media-files/media-store.js';

describe('MediaStore', () => {
  it('serves a file under a random id until its link expires', () => {
    let now = 1_000;
    const store = new MediaStore(60_000, 1024, () => now);
    const id = store.put(Buffer.from('png bytes'), 'image/png', 'png');
    expect(id).toMatch(/^[A-Za-z0-9_-]{24}\.png$/);
    expect(store.put(Buffer.from('x'), 'image/png', 'png')).not.toBe(id);
    expect(store.get(id)?.data.toString()).toBe('png bytes');
    now += 59_999;
    expect(store.get(id)?.contentType).toBe('image/png');
    now += 1;
    expect(store.get(id)).toBeUndefined();
  });

  it('drops the oldest files when newer ones need the room', () => {
    const store = new MediaStore(60_000, 10, () => 0);
    const first = store.put(Buffer.alloc(6), 'video/mp4', 'mp4');
    const second = store.put(Buffer.alloc(4), 'video/mp4', 'mp4');
    const third = store.put(Buffer.alloc(5), 'video/mp4', 'mp4');
    expect(store.get(first)).toBeUndefined();
    expect(store.get(second)).toBeDefined();
    expect(store.get(third)).toBeDefined();
    // A file bigger than the whole store is still kept on its own, until the next one.
    const huge = store.put(Buffer.alloc(50), 'video/mp4', 'mp4');
    expect(store.get(huge)).toBeDefined();
    expect(store.get(third)).toBeUndefined();
  });
});
