/**
 * Permissions (contract §6). A route needs at most one; `admin` passes everything.
 * Xinference 2.12's names are honoured as the sets they stand for.
 */
export const PERMISSIONS = [
  'models:list',
  'models:read',
  'models:register',
  'models:unregister',
  'models:start',
  'models:stop',
  // Running code of the caller's choosing on the host (docs/auth.md, "Running code").
  'models:code',
  // Database keys and users (docs/auth.md, "Keys and users"), Xinference 3's names.
  'keys:read',
  'keys:create',
  'keys:manage',
  'users:manage',
  // The stats routes and the web UI's dashboards (docs/monitoring.md): throughput, latency, memory of every model.
  'monitor:view',
  'admin',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * 2.12's aliases: `models:write` = start + stop, and `models:register` also covers
 * unregister. Key powers nest: whoever may create keys may list their own, whoever
 * manages keys may do both for everyone's.
 */
const ALIASES: Record<string, readonly Permission[]> = {
  'models:write': ['models:start', 'models:stop'],
  'models:register': ['models:register', 'models:unregister'],
  'keys:create': ['keys:create', 'keys:read'],
  'keys:manage': ['keys:manage', 'keys:create', 'keys:read'],
};

/** Every name a config file may list. */
export const ACCEPTED_PERMISSION_NAMES: ReadonlySet<string> = new Set([...PERMISSIONS, ...Object.keys(ALIASES)]);

/** What a set of granted names allows, aliases expanded. */
export function expandScopes(granted: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const name of granted) {
    out.add(name);
    for (const implied of ALIASES[name] ?? []) out.add(implied);
  }
  return out;
}

export function allows(scopes: ReadonlySet<string>, required: Permission): boolean {
  return scopes.has('admin') || scopes.has(required);
}
