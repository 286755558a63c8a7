import { and, eq } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { emailTokens, users } from '../db/schema/users';
import type { AfterCommit } from '../db/transaction';
import { forgetCachedProfile } from './profile';

/**
 * Stores a new password hash for the account (change or reset: lib/auth). With `voidResetLinks`
 * the emailed reset links of the account stop working too (a reset uses one of them). Ending the
 * account's sessions is the caller's.
 */
export async function setPassword(
  tx: Executor,
  afterCommit: AfterCommit,
  userId: string,
  passwordHash: string,
  options: { voidResetLinks?: boolean } = {},
): Promise<void> {
  await tx.update(users).set({ passwordHash }).where(eq(users.id, userId));
  if (options.voidResetLinks)
    await tx.delete(emailTokens).where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, 'reset_password')));
  afterCommit(async () => forgetCachedProfile(userId));
}
