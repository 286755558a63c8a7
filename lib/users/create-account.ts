import type { Executor } from '../db/client';
import { users } from '../db/schema/users';

/** The columns a new account is created with (the rest take their defaults). */
export type NewAccount = Pick<typeof users.$inferInsert, 'email' | 'name' | 'passwordHash'> &
  Partial<Pick<typeof users.$inferInsert, 'isEmailVerified' | 'emailVerifiedAt' | 'termsAcceptedAt' | 'termsVersion'>>;

/**
 * Creates an account (sign-up, or an invitee accepting without one). Undefined when the address
 * is taken: the unique index decides, so two racing requests cannot both create it.
 */
export async function createAccount(tx: Executor, account: NewAccount) {
  const [created] = await tx.insert(users).values(account).onConflictDoNothing().returning();
  return created;
}
