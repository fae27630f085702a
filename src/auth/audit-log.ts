import type { SqliteDatabase } from '../storage/sqlite-database.js';

export interface AuditEntry {
  id: number;
  at: string;
  /** Who did it: a username, or `(auth off)` when authentication was off. */
  actor: string;
  /** What, as `<noun>.<verb>`: `user.create`, `key.revoke`, ... */
  action: string;
  /** What it was done to: `user:3`, `key:12`. */
  target: string | null;
  /** What changed, never a secret (no passwords, no clear keys). */
  detail: Record<string, unknown> | null;
}

export interface AuditQuery {
  from?: string;
  to?: string;
  actor?: string;
  action?: string;
  limit: number;
}

/** The audit table (docs/auth.md, "Audit log"): every admin action, written before it is answered. */
export class AuditLog {
  constructor(private readonly db: SqliteDatabase) {}

  record(actor: string, action: string, target: string | null, detail: Record<string, unknown> | null, now: Date): void {
    this.db
      .prepare('INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)')
      .run(now.toISOString(), actor, action, target, detail === null ? null : JSON.stringify(detail));
  }

  /** Newest first. */
  list(query: AuditQuery): AuditEntry[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (query.from) (where.push('at >= ?'), args.push(query.from));
    if (query.to) (where.push('at < ?'), args.push(query.to));
    if (query.actor) (where.push('actor = ?'), args.push(query.actor));
    if (query.action) (where.push('action = ?'), args.push(query.action));
    const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, query.limit) as Array<Omit<AuditEntry, 'detail'> & { detail: string | null }>;
    return rows.map((r) => ({ ...r, detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>) }));
  }
}
