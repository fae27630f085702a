import { Counter, type Registry } from 'prom-client';

interface Totals {
  keyId: string;
  model: string;
  ok: number;
  errors: number;
  prompt: number;
  completion: number;
}

/**
 * Per-key totals for database API keys (docs/auth.md, "Usage"). Labels stay bounded:
 * key ids (as many as an admin created, never the key itself) and model uids of
 * running instances (an unknown name is counted as `(unknown)`).
 *
 * The request path adds to plain numbers; the counters are filled from them when
 * /metrics is read (prom-client's `collect`), which keeps label hashing off the
 * per-request cost that the auth benchmark measures.
 */
export class KeyMetrics {
  private readonly totals = new Map<string, Totals>();
  private readonly refusalTotals = new Map<string, { keyId: string; limit: string; count: number }>();

  constructor(registry: Registry) {
    const registers = [registry];
    const totals = this.totals;
    const refusalTotals = this.refusalTotals;
    new Counter({
      name: 'hangar_key_requests_total',
      help: 'Inference requests made with a database API key, by key id, model and outcome (ok, error)',
      labelNames: ['key_id', 'model', 'outcome'] as const,
      registers,
      collect() {
        this.reset();
        for (const t of totals.values()) {
          if (t.ok > 0) this.inc({ key_id: t.keyId, model: t.model, outcome: 'ok' }, t.ok);
          if (t.errors > 0) this.inc({ key_id: t.keyId, model: t.model, outcome: 'error' }, t.errors);
        }
      },
    });
    new Counter({
      name: 'hangar_key_tokens_total',
      help: 'Tokens charged to a database API key, by key id, model and kind (prompt, completion)',
      labelNames: ['key_id', 'model', 'kind'] as const,
      registers,
      collect() {
        this.reset();
        for (const t of totals.values()) {
          if (t.prompt > 0) this.inc({ key_id: t.keyId, model: t.model, kind: 'prompt' }, t.prompt);
          if (t.completion > 0) this.inc({ key_id: t.keyId, model: t.model, kind: 'completion' }, t.completion);
        }
      },
    });
    new Counter({
      name: 'hangar_key_rate_limited_total',
      help: 'Requests refused (or streams stopped) by a key limit, by key id and limit (requests, tokens, parallel)',
      labelNames: ['key_id', 'limit'] as const,
      registers,
      collect() {
        this.reset();
        for (const r of refusalTotals.values()) this.inc({ key_id: r.keyId, limit: r.limit }, r.count);
      },
    });
  }

  /**
   * Keys revoked (or deleted with their user) since start: a request of theirs still in
   * flight must not bring their series back when it ends. Key ids are never reused
   * (AUTOINCREMENT), so the set only grows by keys revoked.
   */
  private readonly revoked = new Set<number>();

  answered(keyId: number, model: string, ok: boolean, promptTokens: number, completionTokens: number): void {
    if (this.revoked.has(keyId)) return;
    const id = `${keyId}\u0000${model}`;
    let t = this.totals.get(id);
    if (!t) this.totals.set(id, (t = { keyId: String(keyId), model, ok: 0, errors: 0, prompt: 0, completion: 0 }));
    if (ok) t.ok++;
    else t.errors++;
    t.prompt += promptTokens;
    t.completion += completionTokens;
  }

  /** A terminated model's series go, as every other per-model series does (service-metrics.ts). */
  forgetModel(uid: string): void {
    for (const [id, t] of this.totals) if (t.model === uid) this.totals.delete(id);
  }

  /** A revoked key's series go: its id will never count again. */
  forgetKey(keyId: number): void {
    this.revoked.add(keyId);
    const key = String(keyId);
    for (const [id, t] of this.totals) if (t.keyId === key) this.totals.delete(id);
    for (const [id, r] of this.refusalTotals) if (r.keyId === key) this.refusalTotals.delete(id);
  }

  limited(keyId: number, limit: string): void {
    if (this.revoked.has(keyId)) return;
    const id = `${keyId}\u0000${limit}`;
    let r = this.refusalTotals.get(id);
    if (!r) this.refusalTotals.set(id, (r = { keyId: String(keyId), limit, count: 0 }));
    r.count++;
  }
}
