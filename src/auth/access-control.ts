import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../storage/sqlite-database.js';
import type { AuthConfig } from './auth-config.js';
import { AuditLog } from './audit-log.js';
import { Authenticator } from './authenticator.js';
import { IdentityStore } from './identity-store.js';
import { RateLimiter } from './rate-limiter.js';
import { UsageLedger } from './usage-ledger.js';

export interface AccessControlOptions {
  /** `<home>/state/hangar.db`, or `:memory:` in unit tests. */
  databaseFile: string;
  /** The `--auth-config` file's contents, when one was given. */
  config: AuthConfig | null;
  /** Milliseconds since the epoch; tests move it to cross a limit's minute. */
  now?: () => number;
  /** How often usage counts and last-used stamps are written (default 1 s). */
  flushIntervalMs?: number;
  /** A background flush that failed (a full disk); the counts stay pending for the next one. */
  onFlushError?: (err: unknown) => void;
}

/**
 * Everything about who may do what, over one embedded database: identities (users
 * and keys), the authenticator, per-key limits, usage and the audit log.
 */
export class AccessControl {
  readonly identities: IdentityStore;
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly usage: UsageLedger;
  readonly audit: AuditLog;
  readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(private readonly db: SqliteDatabase, options: AccessControlOptions) {
    this.now = options.now ?? Date.now;
    this.identities = new IdentityStore(db);
    this.authenticator = new Authenticator(options.config, this.identities, this.now);
    this.limiter = new RateLimiter(this.now);
    this.usage = new UsageLedger(db);
    this.audit = new AuditLog(db);
    this.timer = setInterval(() => {
      try {
        this.flush();
      } catch (err) {
        options.onFlushError?.(err);
      }
    }, options.flushIntervalMs ?? 1000);
    this.timer.unref();
  }

  static open(options: AccessControlOptions): AccessControl {
    return new AccessControl(openDatabase(options.databaseFile), options);
  }

  static databaseFile(home: string): string {
    return path.join(home, 'state', 'hangar.db');
  }

  /** The embedded database, for state beside access control (stored responses). */
  get database(): SqliteDatabase {
    return this.db;
  }

  /** Writes what is gathered in memory (usage, last-used stamps). */
  flush(): void {
    if (this.closed) return;
    this.usage.flush();
    this.identities.flushTouches();
  }

  close(): void {
    if (this.closed) return;
    clearInterval(this.timer);
    this.flush();
    this.closed = true;
    this.db.close();
  }
}
