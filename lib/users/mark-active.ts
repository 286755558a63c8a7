import { eq, sql } from 'drizzle-orm';
import { now } from '../clock';
import type { Executor } from '../db/client';
import { users } from '../db/schema/users';

/**
 * Stamps the account's last activity (a sign-in or token refresh: the members list's
 * lastActivityAt). `updated_at` is kept: activity is not a change of the account. The profile
 * does not show it, so the profile cache stays.
 */
export async function markActive(executor: Executor, userId: string) {
  return executor
    .update(users)
    .set({ lastActiveAt: now(), updatedAt: sql`${users.updatedAt}` })
    .where(eq(users.id, userId));
}
