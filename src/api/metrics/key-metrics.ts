import { Counter, type Registry } from 'prom-client';

/**
 * Per-key totals for database API keys (docs/auth.md, "Usage"). Labels stay bounded:
 * key ids (as many as an admin created, never the key itself) and model uids of
 * running instances (an unknown name is counted as `(unknown)`).
 */
export class KeyMetrics {
  private readonly requests: Counter<'key_id' | 'model' | 'outcome'>;
  private readonly tokens: Counter<'key_id' | 'model' | 'kind'>;
  private readonly refusals: Counter<'key_id' | 'limit'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'hangar_key_requests_total',
      help: 'Inference requests made with a database API key, by key id, model and outcome (ok, error)',
      labelNames: ['key_id', 'model', 'outcome'] as const,
      registers,
    });
    this.tokens = new Counter({
      name: 'hangar_key_tokens_total',
      help: 'Tokens charged to a database API key, by key id, model and kind (prompt, completion)',
      labelNames: ['key_id', 'model', 'kind'] as const,
      registers,
    });
    this.refusals = new Counter({
      name: 'hangar_key_rate_limited_total',
      help: 'Requests refused (or streams stopped) by a key limit, by key id and limit (requests, tokens, parallel)',
      labelNames: ['key_id', 'limit'] as const,
      registers,
    });
  }

  answered(keyId: number, model: string, ok: boolean, promptTokens: number, completionTokens: number): void {
    const key = String(keyId);
    this.requests.inc({ key_id: key, model, outcome: ok ? 'ok' : 'error' });
    if (promptTokens > 0) this.tokens.inc({ key_id: key, model, kind: 'prompt' }, promptTokens);
    if (completionTokens > 0) this.tokens.inc({ key_id: key, model, kind: 'completion' }, completionTokens);
  }

  limited(keyId: number, limit: string): void {
    this.refusals.inc({ key_id: String(keyId), limit });
  }
}
