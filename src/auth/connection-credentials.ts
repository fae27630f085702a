import { sameText } from './secret-digest.js';

/**
 * The last API key each keep-alive connection presented, with what it was found to
 * be, valid while the identities do not change (their version). A client sends the
 * same `Authorization` header on every request of a connection; recognising it saves
 * the SHA-256 and the lookup that finding a key costs (bench/auth-limits.ts).
 *
 * The presented text is compared in constant time (`sameText`): a proxy that pools
 * its connections to us may send one client's key where another's came before, and
 * how long a comparison takes must not tell the second how much of the first it
 * guessed. The remembered key lives as long as the connection (a WeakMap on the
 * socket), which already held it in its request buffers.
 */
export class ConnectionCredentials<T> {
  private readonly byConnection = new WeakMap<object, { credential: string; version: number; value: T }>();

  get(connection: object, credential: string, version: number): T | undefined {
    const entry = this.byConnection.get(connection);
    if (!entry || entry.version !== version || !sameText(entry.credential, credential)) return undefined;
    return entry.value;
  }

  set(connection: object, credential: string, version: number, value: T): void {
    this.byConnection.set(connection, { credential, version, value });
  }
}
