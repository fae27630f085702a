import type { SqliteDatabase } from './sqlite-database.js';

/** One stored response: the Response object as answered, and every input item the model saw. */
export interface StoredResponse {
  id: string;
  owner: string;
  createdAt: number;
  response: Record<string, unknown>;
  inputItems: Array<Record<string, unknown>>;
}

export interface ItemPage {
  data: Array<Record<string, unknown>>;
  hasMore: boolean;
}

export interface ItemPageQuery {
  limit: number;
  order: 'asc' | 'desc';
  /** An item id: the page starts after it. */
  after?: string;
}

/** How often inserts also delete what retention has expired (at most once a minute). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Stored Responses API answers (docs/responses.md, "Stored responses") in the embedded
 * database: `store: true` responses with their input items, and their output items
 * indexed by id for `item_reference` inputs. Each belongs to an owner (the username a
 * request came as; '' while auth is off) and is invisible to everybody else.
 *
 * Retention: a response older than `retentionMs` is never returned and is deleted on
 * a later insert (swept at most once a minute); 0 keeps responses until deleted.
 */
export class ResponseStore {
  private lastSweep = 0;
  private readonly statements;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {
    // Prepared once: the schema is in place (openDatabase migrated it).
    this.statements = {
      insertResponse: db.prepare('INSERT INTO responses (id, owner, created_at, model, response, input_items) VALUES (?, ?, ?, ?, ?, ?)'),
      insertItem: db.prepare('INSERT OR REPLACE INTO response_items (id, response_id, owner, item) VALUES (?, ?, ?, ?)'),
      get: db.prepare('SELECT id, owner, created_at, response, input_items FROM responses WHERE id = ? AND owner = ? AND created_at >= ?'),
      item: db.prepare('SELECT i.item FROM response_items i JOIN responses r ON r.id = i.response_id WHERE i.id = ? AND i.owner = ? AND r.created_at >= ?'),
      delete: db.prepare('DELETE FROM responses WHERE id = ? AND owner = ? AND created_at >= ?'),
      sweep: db.prepare('DELETE FROM responses WHERE created_at < ?'),
    };
  }

  save(entry: StoredResponse): void {
    const { insertResponse, insertItem } = this.statements;
    const output = (entry.response.output as Array<Record<string, unknown>> | undefined) ?? [];
    this.db.transaction(() => {
      insertResponse.run(entry.id, entry.owner, entry.createdAt, String(entry.response.model ?? ''), JSON.stringify(entry.response), JSON.stringify(entry.inputItems));
      for (const item of output) if (typeof item.id === 'string') insertItem.run(item.id, entry.id, entry.owner, JSON.stringify(item));
    })();
    this.sweepNowAndThen();
  }

  /** The response, if it exists, is the owner's and has not expired. */
  get(id: string, owner: string): StoredResponse | null {
    const row = this.statements.get.get(id, owner, this.oldestKept()) as
      | { id: string; owner: string; created_at: number; response: string; input_items: string }
      | undefined;
    if (!row) return null;
    return { id: row.id, owner: row.owner, createdAt: row.created_at, response: JSON.parse(row.response), inputItems: JSON.parse(row.input_items) };
  }

  /** An output item of one of the owner's stored responses (what `item_reference` names). */
  item(id: string, owner: string): Record<string, unknown> | null {
    const row = this.statements.item.get(id, owner, this.oldestKept()) as { item: string } | undefined;
    return row ? JSON.parse(row.item) : null;
  }

  /** True when it existed (and was the owner's). */
  delete(id: string, owner: string): boolean {
    return this.statements.delete.run(id, owner, this.oldestKept()).changes > 0;
  }

  /** One page of a stored response's input items (OpenAI's list shape: `after` is an item id). */
  inputItems(stored: StoredResponse, query: ItemPageQuery): ItemPage {
    const ordered = query.order === 'asc' ? stored.inputItems : [...stored.inputItems].reverse();
    let start = 0;
    if (query.after !== undefined) {
      const at = ordered.findIndex((item) => item.id === query.after);
      start = at < 0 ? ordered.length : at + 1;
    }
    const data = ordered.slice(start, start + query.limit);
    return { data, hasMore: start + query.limit < ordered.length };
  }

  /** Deletes every response past retention; returns how many. */
  sweep(): number {
    this.lastSweep = this.now();
    if (this.retentionMs <= 0) return 0;
    return this.statements.sweep.run(this.oldestKept()).changes;
  }

  private sweepNowAndThen(): void {
    if (this.now() - this.lastSweep >= SWEEP_EVERY_MS) this.sweep();
  }

  /** created_at (seconds) of the oldest response still kept. */
  private oldestKept(): number {
    return this.retentionMs <= 0 ? 0 : Math.floor((this.now() - this.retentionMs) / 1000);
  }
}
