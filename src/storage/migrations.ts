/**
 * The embedded database's schema, as numbered steps (docs/database.md). A step is
 * applied once, in one transaction with the bump of `PRAGMA user_version`, so a
 * process killed mid-migration leaves the previous version whole. Never edit a step
 * that has shipped: add the next one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'users, API keys, audit, usage',
    sql: `
      CREATE TABLE meta (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      CREATE TABLE users (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        username      TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        permissions   TEXT NOT NULL DEFAULT '[]',
        enabled       INTEGER NOT NULL DEFAULT 1,
        created_at    TEXT NOT NULL
      );
      CREATE TABLE api_keys (
        id                INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id           INTEGER REFERENCES users(id) ON DELETE CASCADE,
        owner_username    TEXT NOT NULL,
        key_prefix        TEXT NOT NULL,
        key_hash          BLOB NOT NULL UNIQUE,
        name              TEXT NOT NULL,
        description       TEXT,
        enabled           INTEGER NOT NULL DEFAULT 1,
        expires_at        TEXT,
        model_permissions TEXT NOT NULL DEFAULT '[]',
        scopes            TEXT,
        rpm               INTEGER,
        tpm               INTEGER,
        max_parallel      INTEGER,
        created_at        TEXT NOT NULL,
        last_used_at      TEXT
      );
      CREATE INDEX api_keys_prefix ON api_keys(key_prefix);
      CREATE INDEX api_keys_owner ON api_keys(owner_username);
      CREATE TABLE audit_log (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        at     TEXT NOT NULL,
        actor  TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT,
        detail TEXT
      );
      CREATE TABLE usage_hourly (
        key_id            INTEGER NOT NULL,
        model             TEXT NOT NULL,
        hour              TEXT NOT NULL,
        requests          INTEGER NOT NULL DEFAULT 0,
        prompt_tokens     INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        errors            INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, model, hour)
      );
      CREATE INDEX usage_hourly_hour ON usage_hourly(hour);
    `,
  },
  {
    version: 2,
    name: 'stored responses (POST /v1/responses)',
    sql: `
      CREATE TABLE responses (
        id          TEXT PRIMARY KEY,
        owner       TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        model       TEXT NOT NULL,
        response    TEXT NOT NULL,
        input_items TEXT NOT NULL
      );
      CREATE INDEX responses_created ON responses(created_at);
      CREATE TABLE response_items (
        id          TEXT PRIMARY KEY,
        response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
        owner       TEXT NOT NULL,
        item        TEXT NOT NULL
      );
      CREATE INDEX response_items_response ON response_items(response_id);
    `,
  },
  {
    version: 3,
    name: 'stored responses keep each item once (previous_id, deleted)',
    sql: `
      ALTER TABLE responses ADD COLUMN previous_id TEXT;
      ALTER TABLE responses ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX responses_previous ON responses(previous_id);
    `,
  },
  {
    version: 4,
    name: 'usage keeps the owner of a revoked key (key_owners)',
    // A revoked key's row leaves api_keys; its usage must still count as its owner's.
    sql: `
      CREATE TABLE key_owners (
        id             INTEGER PRIMARY KEY,
        owner_username TEXT NOT NULL
      );
      INSERT INTO key_owners (id, owner_username) SELECT id, owner_username FROM api_keys;
      CREATE INDEX key_owners_owner ON key_owners(owner_username);
    `,
  },
  {
    version: 5,
    name: 'stored responses keep the model name (model_name)',
    // A key limited by model name still reads its responses after the model's uid is gone.
    sql: `
      ALTER TABLE responses ADD COLUMN model_name TEXT;
    `,
  },
];
