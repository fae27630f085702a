import type { SqliteDatabase } from './sqlite-database.js';

/** One stored response: the Response object as answered, and every input item the model saw. */
export interface StoredResponse {
  id: string;
  owner: string;
  createdAt: number;
  response: Record<string, unknown>;
  inputItems: Array<Record<string, unknown>>;
  /** The name of the model that answered (`response.model` is the uid asked), null for responses stored before version 5. */
  modelName: string | null;
}

/**
 * What a save adds to a conversation: the response it continued (`previousId`, whose
 * items and output came before this request's input) and this request's own input
 * items. Only those are written; the earlier ones are read back through the chain.
 */
export interface NewResponse {
  id: string;
  owner: string;
  createdAt: number;
  response: Record<string, unknown>;
  /** The answering model's name, kept beside its uid (`response.model`). */
  modelName: string | null;
  previousId: string | null;
  /** This request's own input items. */
  ownItems: Array<Record<string, unknown>>;
  /** Every item before them (the previous response's input and output): written only when that response is gone from the file by the time of the save. */
  history: Array<Record<string, unknown>>;
}

interface Row {
  id: string;
  owner: string;
  created_at: number;
  response: string;
  input_items: string;
  previous_id: string | null;
  model_name: string | null;
  /** Read only along a chain: 1 when deleted but kept for a later response. */
  deleted?: number;
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
 *
 * Each item is stored once: a response that continued another keeps its own input
 * items and the id of the one before (`previous_id`), and its full input is read back
 * along that chain. Storing every earlier item again with each response made a
 * conversation of n turns cost n² items. A response that a later one still continues
 * from is only marked deleted when it is deleted or expires (invisible, as if gone)
 * and leaves the file with the last response that needs it.
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
      insertResponse: db.prepare('INSERT INTO responses (id, owner, created_at, model, model_name, response, input_items, previous_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      insertItem: db.prepare('INSERT OR REPLACE INTO response_items (id, response_id, owner, item) VALUES (?, ?, ?, ?)'),
      get: db.prepare('SELECT id, owner, created_at, response, input_items, previous_id, model_name FROM responses WHERE id = ? AND owner = ? AND created_at >= ? AND deleted = 0'),
      // An earlier response of a chain, whatever its state: a later one still needs its items.
      link: db.prepare('SELECT id, owner, created_at, response, input_items, previous_id, deleted FROM responses WHERE id = ?'),
      item: db.prepare('SELECT i.item FROM response_items i JOIN responses r ON r.id = i.response_id WHERE i.id = ? AND i.owner = ? AND r.created_at >= ? AND r.deleted = 0'),
      hasNext: db.prepare('SELECT 1 FROM responses WHERE previous_id = ? LIMIT 1'),
      markDeleted: db.prepare('UPDATE responses SET deleted = 1 WHERE id = ?'),
      remove: db.prepare('DELETE FROM responses WHERE id = ?'),
      // Deleted or expired, and no later response continues from it: a chain leaves from its end.
      sweep: db.prepare('DELETE FROM responses WHERE (created_at < ? OR deleted = 1) AND NOT EXISTS (SELECT 1 FROM responses n WHERE n.previous_id = responses.id)'),
    };
  }

  save(entry: NewResponse): void {
    const { insertResponse, insertItem, link } = this.statements;
    const output = (entry.response.output as Array<Record<string, unknown>> | undefined) ?? [];
    this.db.transaction(() => {
      // The response it continued was deleted and left the file while this one ran: its items are written here instead.
      const linked = entry.previousId !== null && link.get(entry.previousId) !== undefined;
      const items = linked ? entry.ownItems : [...entry.history, ...entry.ownItems];
      insertResponse.run(entry.id, entry.owner, entry.createdAt, String(entry.response.model ?? ''), entry.modelName, JSON.stringify(entry.response), JSON.stringify(items), linked ? entry.previousId : null);
      for (const item of output) if (typeof item.id === 'string') insertItem.run(item.id, entry.id, entry.owner, JSON.stringify(item));
    })();
    this.sweepNowAndThen();
  }

  /** The response, if it exists, is the owner's, has not expired and was not deleted; with every input item the model saw. */
  get(id: string, owner: string): StoredResponse | null {
    const row = this.statements.get.get(id, owner, this.oldestKept()) as Row | undefined;
    if (!row) return null;
    return { id: row.id, owner: row.owner, createdAt: row.created_at, response: JSON.parse(row.response), inputItems: this.fullInput(row), modelName: row.model_name };
  }

  /** A response's own input items after everything its chain brought before them: each earlier response's input and output. */
  private fullInput(row: Row): Array<Record<string, unknown>> {
    const chain: Row[] = [row];
    const seen = new Set([row.id]);
    for (let at = row; at.previous_id !== null; ) {
      const previous = this.statements.link.get(at.previous_id) as Row | undefined;
      // Never expected (a response leaves the file only once nothing continues from it); a cycle cannot be written either.
      if (!previous || seen.has(previous.id)) break;
      seen.add(previous.id);
      chain.push(previous);
      at = previous;
    }
    const items: Array<Record<string, unknown>> = [];
    for (const [i, link] of chain.reverse().entries()) {
      if (i > 0) items.push(...(((JSON.parse(chain[i - 1]!.response) as Record<string, unknown>).output as Array<Record<string, unknown>> | undefined) ?? []));
      items.push(...(JSON.parse(link.input_items) as Array<Record<string, unknown>>));
    }
    return items;
  }

  /** An output item of one of the owner's stored responses (what `item_reference` names). */
  item(id: string, owner: string): Record<string, unknown> | null {
    const row = this.statements.item.get(id, owner, this.oldestKept()) as { item: string } | undefined;
    return row ? JSON.parse(row.item) : null;
  }

  /**
   * True when it existed (and was the owner's). One that a later response continues
   * from is marked deleted and kept for it; one that nothing continues from leaves the
   * file, and so do the deleted or expired responses before it that only it needed.
   */
  delete(id: string, owner: string): boolean {
    const { get, hasNext, markDeleted, remove, link } = this.statements;
    return this.db.transaction(() => {
      const row = get.get(id, owner, this.oldestKept()) as Row | undefined;
      if (!row) return false;
      if (hasNext.get(id) !== undefined) {
        markDeleted.run(id);
        return true;
      }
      remove.run(id);
      for (let previous = row.previous_id; previous !== null; ) {
        const before = link.get(previous) as Row | undefined;
        const gone = before !== undefined && (before.deleted === 1 || before.created_at < this.oldestKept());
        if (!before || !gone || hasNext.get(previous) !== undefined) break;
        remove.run(previous);
        previous = before.previous_id;
      }
      return true;
    })();
  }


  /**
   * Every stored response of `owner` goes, with its items: their user was deleted, and a
   * new account under the same name must not read them (owners are usernames). A chain
   * never crosses owners (previous_response_id is checked against the caller), so none
   * is cut. Returns how many responses went.
   */
  deleteOwner(owner: string): number {
    return this.db.transaction(() => {
      this.db.prepare('DELETE FROM response_items WHERE owner = ?').run(owner);
      return this.db.prepare('DELETE FROM responses WHERE owner = ?').run(owner).changes;
    })();
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

  /**
   * Deletes every response past retention (or deleted) that no later response still
   * continues from; returns how many. A chain leaves from its end, one pass per link.
   */
  sweep(): number {
    this.lastSweep = this.now();
    let removed = 0;
    for (;;) {
      const changes = this.statements.sweep.run(this.retentionMs <= 0 ? 0 : this.oldestKept()).changes;
      if (changes === 0) return removed;
      removed += changes;
    }
  }

  private sweepNowAndThen(): void {
    if (this.now() - this.lastSweep >= SWEEP_EVERY_MS) this.sweep();
  }

  /** created_at (seconds) of the oldest response still kept. */
  private oldestKept(): number {
    return this.retentionMs <= 0 ? 0 : Math.floor((this.now() - this.retentionMs) / 1000);
  }
}
