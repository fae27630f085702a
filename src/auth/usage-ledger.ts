import type { SqliteDatabase } from '../storage/sqlite-database.js';

export interface UsageCounts {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  errors: number;
}

export interface UsageRow extends UsageCounts {
  /** null: requests without a database key (auth off, a login token, an auth-config key), stored as key 0. */
  key_id: number | null;
  model: string;
  /** The hour's start, ISO 8601 UTC (`2026-11-25T14:00:00.000Z`). */
  hour: string;
}

export interface UsageQuery {
  from?: string;
  to?: string;
  keyIds?: readonly number[];
  model?: string;
}

export type UsageGroup = 'key' | 'user' | 'model';
export type UsageBucket = 'hour' | 'day' | 'week' | 'month';

/** Each bucket's start from the stored hour: UTC days, ISO weeks (from Monday) and calendar months. */
const BUCKET_SQL: Record<UsageBucket, string> = {
  hour: 'u.hour',
  day: `substr(u.hour, 1, 10) || 'T00:00:00.000Z'`,
  // SQLite's 'weekday 0' moves to the next Sunday (or stays on one); six days back is that week's Monday.
  week: `date(substr(u.hour, 1, 10), 'weekday 0', '-6 days') || 'T00:00:00.000Z'`,
  month: `substr(u.hour, 1, 7) || '-01T00:00:00.000Z'`,
};

/** One bucket of a summary: its start, the groups asked for, and the counts summed. */
export interface UsageSummaryRow extends UsageCounts {
  bucket: string;
  key_id?: number | null;
  user?: string;
  model?: string;
}

/**
 * Usage per key, model and hour (docs/auth.md, "Usage"). Counts gather in memory and
 * are added to the table in one transaction per flush (every second, and at stop), so
 * the request path never waits for the disk; a query flushes first. A kill -9 loses
 * at most the last second of counts, never leaves a half-written row.
 */
export class UsageLedger {
  private pending = new Map<number, Map<string, UsageRow & { hourNumber: number }>>();
  /** Rows of an hour that ended before they were written. */
  private spilled: UsageRow[] = [];

  constructor(private readonly db: SqliteDatabase) {}

  /** Adds one request's counts; `nowMs` picks the hour. */
  add(keyId: number, model: string, nowMs: number, counts: Partial<UsageCounts>): void {
    const hour = Math.floor(nowMs / HOUR_MS);
    // Nested maps, not a joined string key: this runs once per keyed request.
    let byModel = this.pending.get(keyId);
    if (!byModel) this.pending.set(keyId, (byModel = new Map()));
    let row = byModel.get(model);
    if (!row || row.hourNumber !== hour) {
      if (row) this.spilled.push(row);
      byModel.set(model, (row = { key_id: keyId, model, hour: hourOf(new Date(nowMs)), hourNumber: hour, requests: 0, prompt_tokens: 0, completion_tokens: 0, errors: 0 }));
    }
    row.requests += counts.requests ?? 0;
    row.prompt_tokens += counts.prompt_tokens ?? 0;
    row.completion_tokens += counts.completion_tokens ?? 0;
    row.errors += counts.errors ?? 0;
  }

  flush(): void {
    if (this.pending.size === 0 && this.spilled.length === 0) return;
    const rows = [...this.spilled, ...[...this.pending.values()].flatMap((byModel) => [...byModel.values()])];
    const upsert = this.db.prepare(
      `INSERT INTO usage_hourly (key_id, model, hour, requests, prompt_tokens, completion_tokens, errors)
       VALUES (@key_id, @model, @hour, @requests, @prompt_tokens, @completion_tokens, @errors)
       ON CONFLICT (key_id, model, hour) DO UPDATE SET
         requests = requests + excluded.requests,
         prompt_tokens = prompt_tokens + excluded.prompt_tokens,
         completion_tokens = completion_tokens + excluded.completion_tokens,
         errors = errors + excluded.errors`,
    );
    this.db.transaction(() => {
      for (const row of rows) upsert.run({ key_id: row.key_id, model: row.model, hour: row.hour, requests: row.requests, prompt_tokens: row.prompt_tokens, completion_tokens: row.completion_tokens, errors: row.errors });
    })();
    // Cleared only once written: a failed write keeps the counts for the next flush.
    this.pending = new Map();
    this.spilled = [];
  }

  /** Hours in [from, to), oldest first. */
  query(query: UsageQuery): UsageRow[] {
    this.flush();
    const filter = whereOf(query);
    if (!filter) return [];
    const sql = `SELECT NULLIF(key_id, 0) AS key_id, model, hour, requests, prompt_tokens, completion_tokens, errors FROM usage_hourly u
      ${filter.sql} ORDER BY hour, key_id, model`;
    return this.db.prepare(sql).all(...filter.args) as UsageRow[];
  }

  /**
   * The same rows summed per bucket (an hour, a UTC day, ISO week or month) and per the groups asked for
   * (a key, its owner, a model), oldest bucket first; a revoked key counts under its
   * owner still (key_owners), one revoked before that table (schema 4) under `(deleted key)`.
   */
  summary(query: UsageQuery, groupBy: readonly UsageGroup[], bucket: UsageBucket): UsageSummaryRow[] {
    this.flush();
    const filter = whereOf(query);
    if (!filter) return [];
    const bucketSql = BUCKET_SQL[bucket];
    const columns: Record<UsageGroup, string> = {
      key: 'NULLIF(u.key_id, 0) AS key_id',
      user: `CASE WHEN u.key_id = 0 THEN 'anonymous' ELSE COALESCE(o.owner_username, '(deleted key)') END AS user`,
      model: 'u.model AS model',
    };
    const names: Record<UsageGroup, string> = { key: 'key_id', user: 'user', model: 'model' };
    const groups = (['key', 'user', 'model'] as const).filter((g) => groupBy.includes(g));
    const sql = `SELECT ${bucketSql} AS bucket${groups.map((g) => `, ${columns[g]}`).join('')},
        SUM(u.requests) AS requests, SUM(u.prompt_tokens) AS prompt_tokens, SUM(u.completion_tokens) AS completion_tokens, SUM(u.errors) AS errors
      FROM usage_hourly u LEFT JOIN key_owners o ON o.id = u.key_id
      ${filter.sql}
      GROUP BY bucket${groups.map((g) => `, ${names[g]}`).join('')}
      ORDER BY bucket${groups.map((g) => `, ${names[g]}`).join('')}`;
    return this.db.prepare(sql).all(...filter.args) as UsageSummaryRow[];
  }
}

/** The WHERE clause of a query over `usage_hourly u`; null when it can match nothing (no keys allowed). */
function whereOf(query: UsageQuery): { sql: string; args: unknown[] } | null {
  const where: string[] = [];
  const args: unknown[] = [];
  // An hour's row counts when the hour starts in [from, to), as a bucket of OpenAI's
  // usage API does: back-to-back ranges never count an hour twice, and an empty range is
  // empty (until 2026-11-29 `from` was rounded down to its hour, so [11:10, 11:20) and
  // [11:30, 12:00) both returned the whole 11:00 hour).
  if (query.from) (where.push('u.hour >= ?'), args.push(new Date(query.from).toISOString()));
  if (query.to) (where.push('u.hour < ?'), args.push(new Date(query.to).toISOString()));
  if (query.model) (where.push('u.model = ?'), args.push(query.model));
  if (query.keyIds) {
    if (query.keyIds.length === 0) return null;
    where.push(`u.key_id IN (${query.keyIds.map(() => '?').join(', ')})`);
    args.push(...query.keyIds);
  }
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', args };
}

const HOUR_MS = 3_600_000;

/** The start of the hour `at` falls in, as stored (`2026-11-25T14:00:00.000Z`). */
function hourOf(at: Date): string {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS).toISOString();
}
