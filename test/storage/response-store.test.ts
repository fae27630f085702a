import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { responsesRetentionFromEnv } from '../../src/config/config.js';
import { MIGRATIONS } from '../../src/storage/migrations.js';
import { ResponseStore, type NewResponse } from '../../src/storage/response-store.js';
import { openDatabase, type SqliteDatabase } from '../../src/storage/sqlite-database.js';

const HOUR = 3_600_000;

function entry(id: string, owner: string, createdAtMs: number, previousId: string | null = null, history: NewResponse['history'] = []): NewResponse {
  return {
    id,
    owner,
    createdAt: Math.floor(createdAtMs / 1000),
    response: { id, model: 'm', output: [{ id: `msg_${id}`, type: 'message', content: [{ type: 'output_text', text: id }] }] },
    modelName: 'm-name',
    previousId,
    ownItems: [1, 2, 3].map((n) => ({ id: `in_${id}_${n}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: String(n) }] })),
    history,
  };
}

const ids = (items: Array<Record<string, unknown>> | undefined) => (items ?? []).map((i) => i.id);
const rows = (db: SqliteDatabase) => db.prepare('SELECT id, deleted FROM responses ORDER BY created_at, id').all();

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
    expect(store.get('resp_a', 'ann')?.modelName).toBe('m-name');
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

  it('stores each item of a conversation once, and reads every earlier one back along the chain', () => {
    const store = new ResponseStore(db, 0, () => now);
    store.save(entry('r1', 'ann', now));
    const second = store.get('r1', 'ann')!;
    store.save(entry('r2', 'ann', now + 1000, 'r1', [...second.inputItems, ...(second.response.output as [])]));
    const third = store.get('r2', 'ann')!;
    store.save(entry('r3', 'ann', now + 2000, 'r2', [...third.inputItems, ...(third.response.output as [])]));
    const expected = ['in_r1_1', 'in_r1_2', 'in_r1_3', 'msg_r1', 'in_r2_1', 'in_r2_2', 'in_r2_3', 'msg_r2', 'in_r3_1', 'in_r3_2', 'in_r3_3'];
    expect(ids(store.get('r3', 'ann')?.inputItems)).toEqual(expected);
    // Each row holds only its own three items, however long the chain.
    const stored = db.prepare('SELECT id, input_items, previous_id FROM responses ORDER BY id').all() as Array<{ id: string; input_items: string; previous_id: string | null }>;
    expect(stored.map((r) => [r.id, JSON.parse(r.input_items).length, r.previous_id])).toEqual([['r1', 3, null], ['r2', 3, 'r1'], ['r3', 3, 'r2']]);
    expect(store.get('r3', 'bob')).toBeNull();
  });

  it('keeps a deleted response that a later one continues from, invisible, until nothing needs it', () => {
    const store = new ResponseStore(db, 0, () => now);
    store.save(entry('r1', 'ann', now));
    store.save(entry('r2', 'ann', now + 1000, 'r1'));
    store.save(entry('r3', 'ann', now + 2000, 'r2'));
    expect(store.delete('r2', 'ann')).toBe(true);
    expect(store.get('r2', 'ann')).toBeNull();
    expect(store.item('msg_r2', 'ann')).toBeNull();
    expect(store.delete('r2', 'ann')).toBe(false);
    expect(ids(store.get('r3', 'ann')?.inputItems)).toContain('msg_r2');
    expect(rows(db)).toEqual([{ id: 'r1', deleted: 0 }, { id: 'r2', deleted: 1 }, { id: 'r3', deleted: 0 }]);
    // The last response that needed it goes, and takes it along; r1 was never deleted and stays.
    expect(store.delete('r3', 'ann')).toBe(true);
    expect(rows(db)).toEqual([{ id: 'r1', deleted: 0 }]);
    expect(db.prepare('SELECT id FROM response_items ORDER BY id').all()).toEqual([{ id: 'msg_r1' }]);
  });

  it('sweeps an expired chain from its end, never a response a live one continues from', () => {
    const store = new ResponseStore(db, 24 * HOUR, () => now);
    store.save(entry('r1', 'ann', now));
    now += 20 * HOUR;
    store.save(entry('r2', 'ann', now, 'r1'));
    now += 5 * HOUR;
    expect(store.get('r1', 'ann')).toBeNull(); // expired: hidden at once
    expect(store.sweep()).toBe(0); // but r2 continues from it
    expect(ids(store.get('r2', 'ann')?.inputItems)).toEqual(['in_r1_1', 'in_r1_2', 'in_r1_3', 'msg_r1', 'in_r2_1', 'in_r2_2', 'in_r2_3']);
    now += 20 * HOUR;
    expect(store.sweep()).toBe(2);
    expect(rows(db)).toEqual([]);
  });

  it('writes the earlier items itself when the response it continued left the file meanwhile', () => {
    const store = new ResponseStore(db, 0, () => now);
    store.save(entry('r1', 'ann', now));
    const history = [...store.get('r1', 'ann')!.inputItems, ...(store.get('r1', 'ann')!.response.output as [])];
    expect(store.delete('r1', 'ann')).toBe(true);
    store.save(entry('r2', 'ann', now + 1000, 'r1', history));
    expect(ids(store.get('r2', 'ann')?.inputItems)).toEqual(['in_r1_1', 'in_r1_2', 'in_r1_3', 'msg_r1', 'in_r2_1', 'in_r2_2', 'in_r2_3']);
    expect(db.prepare('SELECT previous_id FROM responses').get()).toEqual({ previous_id: null });
  });

  it('reads the responses a version-2 file stored, every item in its own row, after the migration', () => {
    const file = path.join(dir, 'v2.db');
    const old = openDatabase(file, MIGRATIONS.filter((m) => m.version <= 2));
    const items = [{ id: 'in_a', type: 'message' }, { id: 'msg_old', type: 'message' }, { id: 'in_b', type: 'message' }];
    old.prepare('INSERT INTO responses (id, owner, created_at, model, response, input_items) VALUES (?, ?, ?, ?, ?, ?)').run('resp_v2', 'ann', Math.floor(now / 1000), 'm', JSON.stringify({ id: 'resp_v2', output: [] }), JSON.stringify(items));
    old.close();
    const migrated = openDatabase(file);
    try {
      const store = new ResponseStore(migrated, 0, () => now);
      expect(store.get('resp_v2', 'ann')?.inputItems).toEqual(items);
      // Stored before version 5: no model name; a new one keeps its own.
      expect(store.get('resp_v2', 'ann')?.modelName).toBeNull();
      store.save(entry('resp_next', 'ann', now + 1000, 'resp_v2'));
      expect(ids(store.get('resp_next', 'ann')?.inputItems)).toEqual(['in_a', 'msg_old', 'in_b', 'in_resp_next_1', 'in_resp_next_2', 'in_resp_next_3']);
    } finally {
      migrated.close();
    }
  });

  it('reads HANGAR_RESPONSES_RETENTION_HOURS', () => {
    expect(responsesRetentionFromEnv({})).toBe(720);
    expect(responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: '0.5' })).toBe(0.5);
    expect(responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: '0' })).toBe(0);
    expect(() => responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: '-1' })).toThrow(/HANGAR_RESPONSES_RETENTION_HOURS/);
    expect(() => responsesRetentionFromEnv({ HANGAR_RESPONSES_RETENTION_HOURS: 'week' })).toThrow(/HANGAR_RESPONSES_RETENTION_HOURS/);
  });
});
