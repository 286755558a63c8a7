import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db, type Executor } from '../db/client';
import { emailTokens, users } from '../db/schema/users';
import { constantTimeEqual, hashToken, newOpaqueToken } from '../secrets';

export type EmailTokenPurpose = (typeof emailTokens.$inferSelect)['purpose'];

const PREFIX: Record<EmailTokenPurpose, string> = { verify_email: 'cebs_ev_', reset_password: 'cebs_pr_' };
/** Verification links live two days; reset links one hour. */
export const EMAIL_TOKEN_TTL_SECONDS: Record<EmailTokenPurpose, number> = {
  verify_email: 2 * 86_400,
  reset_password: 3600,
};

const ADDRESS_TAG_LENGTH = 22;

/**
 * The tail of a token that ties it to the address it was emailed to. A link proves control of that
 * address only: once the account's email changes (PATCH /organization/{orgId}/user), links sent to
 * the old address must neither verify nor reset the new one.
 */
function addressTag(head: string, email: string): string {
  return createHash('sha256').update(`${head}\n${email}`).digest('base64url').slice(0, ADDRESS_TAG_LENGTH);
}

/** Issues a new token for the purpose, replacing any earlier one, and returns its value (to email to `user.email`). */
export async function issueEmailToken(
  tx: Executor,
  user: { id: string; email: string },
  purpose: EmailTokenPurpose,
): Promise<string> {
  const head = newOpaqueToken(PREFIX[purpose]);
  const token = `${head}${addressTag(head, user.email)}`;
  await tx.delete(emailTokens).where(and(eq(emailTokens.userId, user.id), eq(emailTokens.purpose, purpose)));
  await tx.insert(emailTokens).values({
    userId: user.id,
    purpose,
    tokenHash: hashToken(token),
    expiresAt: addSeconds(now(), EMAIL_TOKEN_TTL_SECONDS[purpose]),
  });
  return token;
}

/**
 * Finds a token by its hash, with its user; `expired` tells whether it may still be used. A token
 * emailed to an address the user no longer has is not found.
 */
export async function findEmailToken(token: string, purpose: EmailTokenPurpose) {
  const [row] = await db()
    .select({ tokenId: emailTokens.id, expiresAt: emailTokens.expiresAt, user: users })
    .from(emailTokens)
    .innerJoin(users, eq(users.id, emailTokens.userId))
    .where(and(eq(emailTokens.tokenHash, hashToken(token)), eq(emailTokens.purpose, purpose)))
    .limit(1);
  if (!row) return undefined;
  const head = token.slice(0, -ADDRESS_TAG_LENGTH);
  if (!constantTimeEqual(token.slice(-ADDRESS_TAG_LENGTH), addressTag(head, row.user.email))) return undefined;
  return { ...row, expired: row.expiresAt <= now() };
}
