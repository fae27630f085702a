import { describe, expect, it } from 'vitest';
import { auditQuery, usageQuery } from '../../src/api/admin/schema.js';

describe('the time bounds of usage and audit queries', () => {
  it('are the UTC text the database stores, whatever offset or precision the caller wrote', () => {
    for (const schema of [auditQuery, usageQuery]) {
      expect(schema.parse({ from: '2026-11-29T05:00:00+05:00' }).from).toBe('2026-11-29T00:00:00.000Z');
      expect(schema.parse({ to: '2026-11-29T03:00:00-05:00' }).to).toBe('2026-11-29T08:00:00.000Z');
      // Without milliseconds it still sorts before a stored 03:34:18.702Z.
      expect(schema.parse({ from: '2026-11-29T03:34:18Z' }).from! < '2026-11-29T03:34:18.702Z').toBe(true);
    }
  });

  it('refuse a time past year 9999, which would sort before every stored time', () => {
    const parsed = usageQuery.safeParse({ from: '9999-12-31T23:59:59-14:00' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['from'], message: expect.stringContaining('9999') });
    expect(auditQuery.safeParse({ to: 'yesterday' }).success).toBe(false);
  });
});
