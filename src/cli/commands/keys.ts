import { Command, InvalidArgumentError } from 'commander';
import { clientAction, clientActionWithArgument, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { out } from '../terminal.js';

type Key = Record<string, unknown> & { limits?: Record<string, number | null> };

export function positiveInteger(value: string): number {
  // Digits only (Number() reads "0x10" as 16), and no more than an id or a limit can be.
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

const list = (value: string): string[] => value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);

/**
 * `--models`: an empty list would make a key for every model (the server reads `[]` as
 * all), as a script's `--models "$ALLOWED"` with the variable unset did; refused, as an
 * empty `-u` is. Leaving the flag out is how a key for all models is made.
 */
const modelList = (value: string): string[] => {
  const models = list(value);
  if (models.length === 0) throw new InvalidArgumentError('must name at least one model uid or name (leave --models out for a key that may use every model).');
  return models;
};

interface CreateOptions extends ConnectionOptions {
  name: string;
  description?: string;
  owner?: string;
  rpm?: number;
  tpm?: number;
  maxParallel?: number;
  models?: string[];
  scopes?: string[];
  expiresAt?: string;
  json?: boolean;
}

/** `hangar keys create|list|revoke` (docs/auth.md, "Keys and users"). */
export function keysCommand(): Command {
  const keys = new Command('keys').description('create, list and revoke API keys kept in the server\'s database');

  keys.addCommand(
    withConnectionOptions(
      new Command('create')
        .description('create an API key; the key is printed once and cannot be shown again')
        .requiredOption('--name <name>', 'what the key is for')
        .option('--description <text>', 'a longer note')
        .option('--owner <user>', 'owner (username or id; needs keys:manage); default: you')
        .option('--rpm <n>', 'requests per minute', positiveInteger)
        .option('--tpm <n>', 'tokens (prompt + completion) per minute', positiveInteger)
        .option('--max-parallel <n>', 'requests in flight at once', positiveInteger)
        .option('--models <uids>', 'comma-separated model uids or names the key may use (default: all)', modelList)
        .option('--scopes <permissions>', "comma-separated permissions, a subset of the owner's (default: the owner's)", list)
        .option('--expires-at <time>', 'ISO 8601 time the key stops working, e.g. 2027-01-01T00:00:00Z')
        .option('--json', 'print the answer as JSON'),
    ).action(
      clientAction<CreateOptions>(async (http, o) => {
        const limits = { rpm: o.rpm ?? null, tpm: o.tpm ?? null, max_parallel: o.maxParallel ?? null };
        const body: Record<string, unknown> = { name: o.name, limits };
        if (o.description) body.description = o.description;
        // As given: the server reads digits as the user of that name if there is one, else the id.
        if (o.owner) body.owner = o.owner;
        if (o.models) body.model_permissions = o.models;
        if (o.scopes) body.scopes = o.scopes;
        if (o.expiresAt) body.expires_at = o.expiresAt;
        const created = await http.post<{ id: number; key: string; prefix: string; name: string }>('/v1/admin/keys', body);
        if (o.json) return printJson(created);
        out(`Created key ${created.id} (${created.name}):\n\n  ${created.key}\n\nCopy it now: the server keeps only a digest and cannot show it again.\n`);
      }),
    ),
  );

  keys.addCommand(
    withConnectionOptions(
      new Command('list').description('list API keys (yours, or everyone\'s with keys:manage)').option('--owner <user>', 'only this owner\'s (username or id)').option('--json', 'print the list as JSON'),
    ).action(
      clientAction<ConnectionOptions & { owner?: string; json?: boolean }>(async (http, o) => {
        const rows = await http.get<Key[]>(`/v1/admin/keys${o.owner ? `?owner=${encodeURIComponent(o.owner)}` : ''}`);
        if (o.json) return printJson(rows);
        if (rows.length === 0) return void out('No API keys.\n');
        const limit = (k: Key, name: string) => k.limits?.[name] ?? '-';
        out(
          `${formatTable(
            ['ID', 'Prefix', 'Name', 'Owner', 'Enabled', 'RPM', 'TPM', 'Parallel', 'Models', 'Expires', 'Last used'],
            rows.map((k) => [k.id, k.key_prefix, k.name, k.owner_username, k.enabled ? 'yes' : 'no', limit(k, 'rpm'), limit(k, 'tpm'), limit(k, 'max_parallel'), (k.model_permissions as string[] | null)?.length ? k.model_permissions : 'all', k.expires_at ?? 'never', k.last_used_at ?? 'never']),
          )}\n`,
        );
      }),
    ),
  );

  keys.addCommand(
    withConnectionOptions(new Command('revoke').description('revoke an API key: it stops working at once').argument('<id>', 'the key id (see `hangar keys list`)', positiveInteger)).action(
      clientActionWithArgument<number, ConnectionOptions>(async (http, id) => {
        await http.delete(`/v1/admin/keys/${id}`);
        out(`Revoked key ${id}.\n`);
      }),
    ),
  );
  return keys;
}

/** `hangar usage`: requests and tokens by key, model and hour. */
export function usageCommand(): Command {
  return withConnectionOptions(
    new Command('usage')
      .description('requests and tokens per API key, model and hour (yours, or everyone\'s with keys:manage)')
      .option('--key-id <id>', 'one key only', positiveInteger)
      .option('--model <uid>', 'one model only')
      .option('--from <time>', 'from this ISO 8601 time')
      .option('--to <time>', 'up to this ISO 8601 time')
      .option('--json', 'print the rows as JSON'),
  ).action(
    clientAction<ConnectionOptions & { keyId?: number; model?: string; from?: string; to?: string; json?: boolean }>(async (http, o) => {
      const query = new URLSearchParams();
      if (o.keyId) query.set('key_id', String(o.keyId));
      if (o.model) query.set('model', o.model);
      if (o.from) query.set('from', o.from);
      if (o.to) query.set('to', o.to);
      const rows = await http.get<Array<Record<string, unknown>>>(`/v1/admin/usage${query.size ? `?${query}` : ''}`);
      if (o.json) return printJson(rows);
      if (rows.length === 0) return void out('No usage recorded.\n');
      const columns = ['hour', 'key_id', 'model', 'requests', 'prompt_tokens', 'completion_tokens', 'errors'];
      out(`${formatTable(['Hour', 'Key', 'Model', 'Requests', 'Prompt tokens', 'Completion tokens', 'Errors'], rows.map((r) => columns.map((c) => r[c])))}\n`);
    }),
  );
}
