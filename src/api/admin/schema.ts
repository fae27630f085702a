import { z } from 'zod';
import { ACCEPTED_PERMISSION_NAMES } from '../../auth/permissions.js';

/**
 * Request shapes of /v1/admin/* (docs/auth.md, "Keys and users"), Xinference 3's where
 * it has them. Bodies are strict: a misspelt field (`rpm` beside `limits`) would
 * otherwise make a key without the limit its creator meant, without a word.
 */

const permissionName = z.string().refine((p) => ACCEPTED_PERMISSION_NAMES.has(p), {
  error: (i) => `unknown permission ${JSON.stringify(i.input)}; known: ${[...ACCEPTED_PERMISSION_NAMES].join(', ')}`,
});
const permissionList = z.array(permissionName).max(64);
const limit = z.number().int().positive().max(1_000_000_000).nullable().optional();

export const idParams = z.object({ id: z.coerce.number().int().positive() });

export const createUserBody = z.strictObject({
  username: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[\w.@-]+$/, 'letters, digits, _ . @ - only')
    // Usage by user names requests without a database key `anonymous`: a user of that name was merged with them.
    .refine((v) => v.toLowerCase() !== 'anonymous', 'anonymous is the name usage gives requests without a database key; choose another'),
  // Hashed with scrypt; the length is all we ask (NIST 800-63B's habit).
  password: z.string().min(8, 'must be at least 8 characters').max(1024),
  permissions: permissionList.default([]),
});

export const updateUserBody = z.strictObject({
  enabled: z.boolean().optional(),
  permissions: permissionList.optional(),
});

export const passwordBody = z.strictObject({
  new_password: z.string().min(8, 'must be at least 8 characters').max(1024),
});

/** The last second an ISO 8601 date of four year digits can say (9999-12-31T23:59:59Z). */
const LAST_SECOND = 253_402_300_799;

/** An instant: ISO 8601 with a zone, or seconds since the epoch (up to the year 9999). */
const instant = z
  .union([z.iso.datetime({ offset: true }), z.number().int().nonnegative().max(LAST_SECOND, `must be at most ${LAST_SECOND} seconds (9999-12-31T23:59:59Z)`)])
  .transform((v) => new Date(typeof v === 'number' ? v * 1000 : v).toISOString());

export const keyLimits = z.object({ rpm: limit, tpm: limit, max_parallel: limit }).strict();

/**
 * A key's name is shown in tables, dialogs and the CLI: no control characters, and no
 * invisible formatting, whose right-to-left override showed `\u202eyek-nimda` as "admin-key".
 */
const keyName = z
  .string()
  .min(1)
  .max(128)
  .refine((v) => !/[\p{Cc}\p{Cf}]/u.test(v), 'must not hold control or invisible formatting characters (a right-to-left override shows a name as another)');

export const createKeyBody = z.strictObject({
  name: keyName,
  description: z.string().max(1024).nullable().optional(),
  /** The owner's user id or username; absent: the caller. */
  owner: z.union([z.number().int().positive(), z.string().min(1).max(64)]).nullable().optional(),
  expires_at: instant.nullable().optional(),
  model_permissions: z.array(z.string().min(1).max(256)).max(256).default([]),
  scopes: permissionList.nullable().optional(),
  limits: keyLimits.optional(),
});

export const updateKeyBody = z.strictObject({
  name: keyName.optional(),
  description: z.string().max(1024).nullable().optional(),
  enabled: z.boolean().optional(),
  expires_at: instant.nullable().optional(),
  model_permissions: z.array(z.string().min(1).max(256)).max(256).optional(),
  scopes: permissionList.nullable().optional(),
  limits: keyLimits.optional(),
});

export const keysQuery = z.object({
  owner: z.string().min(1).max(64).optional(),
});

const USAGE_GROUPS = ['key', 'user', 'model'] as const;

/**
 * A time bound of a query, in any offset ISO 8601 allows, as the UTC text the database
 * stores (`2026-11-29T03:34:18.714Z`), which it is compared with as text: the audit
 * log compared the query's own spelling, so `05:00+05:00` or a time without
 * milliseconds missed rows. A year past 9999 (`+010000-...`) sorts before every stored
 * time, and is refused.
 */
const timeBound = z.iso
  .datetime({ offset: true })
  .transform((value) => new Date(value).toISOString())
  .refine((iso) => /^\d{4}-/.test(iso), 'must be a time from year 0 to 9999 (UTC)');

export const usageQuery = z.object({
  from: timeBound.optional(),
  to: timeBound.optional(),
  key_id: z.coerce.number().int().positive().optional(),
  model: z.string().min(1).max(256).optional(),
  // docs/auth.md, "Usage": sums per bucket and group, and CSV.
  group_by: z
    .string()
    .max(64)
    .transform((v) => v.split(',').map((g) => g.trim()).filter(Boolean))
    .pipe(z.array(z.enum(USAGE_GROUPS, { error: 'must be key, user or model, comma-separated' })))
    .optional(),
  bucket: z.enum(['hour', 'day', 'week', 'month'], { error: 'must be hour, day, week or month' }).optional(),
  format: z.enum(['json', 'csv'], { error: 'must be json or csv' }).default('json'),
});

export const auditQuery = z.object({
  from: timeBound.optional(),
  to: timeBound.optional(),
  actor: z.string().max(64).optional(),
  action: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});
