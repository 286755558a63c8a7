import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../lib/admin/cli';
import { db } from '../../lib/db/client';
import { users } from '../../lib/db/schema';
import { createUser, uniqueEmail } from '../harness/actors';

async function isSuperAdmin(id: string) {
  const [row] = await db().select({ isSuperAdmin: users.isSuperAdmin }).from(users).where(eq(users.id, id));
  return row!.isSuperAdmin;
}

describe('npm run admin -- super-admin', () => {
  it('grants and revokes super admin by email', async () => {
    const user = await createUser();
    const lines: string[] = [];
    expect(await runAdminCommand(['super-admin', 'grant', user.email.toUpperCase()], (l) => lines.push(l))).toBe(0);
    expect(await isSuperAdmin(user.id)).toBe(true);
    expect(await runAdminCommand(['super-admin', 'revoke', user.email], (l) => lines.push(l))).toBe(0);
    expect(await isSuperAdmin(user.id)).toBe(false);
    expect(lines).toEqual([expect.stringContaining('granted'), expect.stringContaining('revoked')]);
  });

  it('exits 1 for an unknown email and 2 with usage for a bad command', async () => {
    const lines: string[] = [];
    expect(await runAdminCommand(['super-admin', 'grant', uniqueEmail('nobody')], (l) => lines.push(l))).toBe(1);
    expect(await runAdminCommand(['super-admin', 'promote', 'x@example.com'], (l) => lines.push(l))).toBe(2);
    expect(lines[1]).toContain('Usage');
  });
});
