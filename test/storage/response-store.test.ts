import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { responsesRetentionFromEnv } from '../../src/config/config.js';
import { MIGRATIONS } from '../../src/storage/migrations.js';
import { ResponseStore, type StoredResponse } from '../../src/storage/response-store.js';
import { openDatabase, type SqliteDatabase } from '../../src/storage/sqlite-database.js';

const HOUR = 3_600_000;

function entry(id: string, owner: string, createdAtMs: number): StoredResponse {
  return {
    id,
    owner,
    createdAt: Math.floor(createdAtMs / 1000),
    response: { id, model: 'm', output: [{ id: `msg_${id}`, type: 'message', content: [{ type: 'output_text', text: id }] }] },
    inputItems: [1, 2, 3].map((n) => ({ id: `in_${id}_${n}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: String(n) }] })),
  };
}

/** The stored responses (docs/responses.md) on a real SQLite file: ownership, items, paging, retention. */
describe('ResponseStore', () => {
  let dir: string;
  let db: SqliteDatabase;
  let now: number;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-responses-'));
    db = openDatabase(path.join(dir, 'hangar.db'));
    now = Date.UTC(2026, 10, 26, 12);
  });
  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers only the owner, for the response, its output items and delete', () => {
    const store = new ResponseStore(db, 720 * HOUR, () => now);
    store.save(entry('resp_a', 'ann', now));
    expect(store.get('resp_a', 'ann')?.response.id).toBe('resp_a');
    expect(store.get('resp_a', 'bob')).toBeNull();
    expect(store.get('resp_a', '')).toBeNull(); // auth off is not everybody's key
    expect(store.item('msg_resp_a', 'ann')).toMatchObject({ type: 'message' });
    expect(store.item('msg_resp_a', 'bob')).toBeNull();
    expect(store.delete('resp_a', 'bob')).toBe(false);
    expect(store.delete('resp_a', 'ann')).toBe(true);
    expect(store.get('resp_a', 'ann')).toBeNull();
    // Its items went with it (ON DELETE CASCADE).
    expect(store.item('msg_resp_a', 'ann')).toBeNull();
    expect(db.prepare('SELECT count(*) AS n FROM response_items').get()).toEqual({ n: 0 });
  });

  it('pages input items after an id, in either order', () => {
    const store = new ResponseStore(db, 0, () => now);
    store.save(entry('resp_p', '', now));
    const stored = store.get('resp_p', '')!;
    const asc = store.inputItems(stored, { limit: 2, order: 'asc' });
    expect(asc.data.map((i) => i.id)).toEqual(['in_resp_p_1', 'in_resp_p_2']);
    expect(asc.hasMore).toBe(true);
    expect(store.inputItems(stored, { limit: 2, order: 'asc', after: 'in_resp_p_2' })).toEqual({ data: [stored.inputItems[2]], hasMore: false });
    expect(store.inputItems(stored, { limit: 5, order: 'desc' }).data.map((i) => i.id)).toEqual(['in_resp_p_3', 'in_resp_p_2', 'in_resp_p_1']);
    expect(store.inputItems(stored, { limit: 5, order: 'asc', after: 'unknown' }).data).toEqual([]);
  });

  it('hides responses past retention at once, and deletes them on a later save', () => {
    const store = new ResponseStore(db, 24 * HOUR, () => now);
    store.save(entry('resp_old', 'ann', now));
    now += 23 * HOUR;
    expect(store.get('resp_old', 'ann')).not.toBeNull();
    now += 2 * HOUR;
    expect(store.get('resp_old', 'ann')).toBeNull();
    expect(store.item('msg_resp_old', 'ann')).toBeNull();
    expect(store.delete('resp_old', 'ann')).toBe(false);
    expect(db.prepare('SELECT count(*) AS n FROM responses').get()).toEqual({ n: 1 }); // hidden, not yet swept
    store.save(entry('resp_new', 'ann', now));
    expect(db.prepare('SELECT id FROM responses').all()).toEqual([{ id: 'resp_new' }]);
    expect(db.prepare('SELECT id FROM response_items').all()).toEqual([{ id: 'msg_resp_new' }]);
  });

  it('keeps everything with retention 0, and the table is part of the numbered schema', () => {
    const store = new ResponseStore(db, 0, () => now);
    store.save(entry('resp_kept', 'ann', now));
    now += 10_000 * HOUR;
    expect(store.sweep()).toBe(0);
    expect(store.get('resp_kept', 'ann')).not.toBeNull();
    expect(MIGRATIONS.find((m) => m.sql.includes('CREATE TABLE responses'))?.version).toBe(2);
  });

  it('reads HANGAR_RESPONSES_RETENTION_HOURS', () => {
    expect(responsesRetentionFromEnv({})).toBe(720);
    expect(responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: '0.5' })).toBe(0.5);
    expect(responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: '0' })).toBe(0);
    expect(() => responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: '-1' })).toThrow(/HANGAR_RESPONSES_RETENTION_HOURS/);
    expect(() => responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: 'week' })).toThrow(/HANGAR_RESPONSES_RETENTION_HOURS/);
  });
});
