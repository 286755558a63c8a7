import { and, eq } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db, type Executor } from '../db/client';
import { emailTokens, users } from '../db/schema';
import { hashToken, newOpaqueToken } from '../secrets';

export type EmailTokenPurpose = (typeof emailTokens.$inferSelect)['purpose'];

const PREFIX: Record<EmailTokenPurpose, string> = { verify_email: 'cebs_ev_', reset_password: 'cebs_pr_' };
/** Verification links live two days; reset links one hour. */
export const EMAIL_TOKEN_TTL_SECONDS: Record<EmailTokenPurpose, number> = { verify_email: 2 * 86_400, reset_password: 3600 };

/** Issues a new token for the purpose, replacing any earlier one, and returns its value (to email). */
export async function issueEmailToken(tx: Executor, userId: string, purpose: EmailTokenPurpose): Promise<string> {
  const token = newOpaqueToken(PREFIX[purpose]);
  await tx.delete(emailTokens).where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose)));
  await tx.insert(emailTokens).values({
    userId,
    purpose,
    tokenHash: hashToken(token),
    expiresAt: addSeconds(now(), EMAIL_TOKEN_TTL_SECONDS[purpose]),
  });
  return token;
}

/** Finds a token by its hash, with its user; `expired` tells whether it may still be used. */
export async function findEmailToken(token: string, purpose: EmailTokenPurpose) {
  const [row] = await db()
    .select({ tokenId: emailTokens.id, expiresAt: emailTokens.expiresAt, user: users })
    .from(emailTokens)
    .innerJoin(users, eq(users.id, emailTokens.userId))
    .where(and(eq(emailTokens.tokenHash, hashToken(token)), eq(emailTokens.purpose, purpose)))
    .limit(1);
  return row ? { ...row, expired: row.expiresAt <= now() } : undefined;
}
