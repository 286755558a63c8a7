import { eq } from 'drizzle-orm';
import { now } from '../clock';
import type { Executor } from '../db/client';
import { emailTokens, users } from '../db/schema/users';
import type { AfterCommit } from '../db/transaction';
import { forgetCachedProfile } from './profile';

/**
 * The account side of a takeover (an invitee proving the mailbox of an unverified account,
 * lib/organizations/invitations/accept-invitation.ts): the acceptor's name and password, the email
 * marked verified, and what the earlier holder stated about themselves cleared, as for a new
 * invitee. Verification and reset links of the earlier holder die with the account's past.
 * Ending its sessions and what it built is the caller's.
 */
export async function takeOverAccount(
  tx: Executor,
  afterCommit: AfterCommit,
  userId: string,
  acceptor: { name: string; passwordHash: string },
): Promise<void> {
  await tx
    .update(users)
    .set({
      name: acceptor.name,
      passwordHash: acceptor.passwordHash,
      isEmailVerified: true,
      emailVerifiedAt: now(),
      phoneNumbers: [],
      onboardingStatus: 'not_started',
      onboardingStep: 0,
      userType: null,
      termsAcceptedAt: null,
      termsVersion: null,
      updatedAt: now(),
    })
    .where(eq(users.id, userId));
  await tx.delete(emailTokens).where(eq(emailTokens.userId, userId));
  afterCommit(async () => forgetCachedProfile(userId));
}
