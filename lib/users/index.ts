import { eq, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { CheckEmailAvailabilityDto } from '../../schemas/auth/check-email-availability';
import type { SendForgotPasswordLinkDto } from '../../schemas/auth/password-reset';
import type { UpdateUserDto, VerifyEmailDto } from '../../schemas/user/update-user';
import { recordMemberAudit } from '../audit/record';
import { provenUser } from '../audit/scope';
import { now } from '../clock';
import { db } from '../db/client';
import { extractionCodes } from '../db/schema/platform';
import { emailTokens, users } from '../db/schema/users';
import { transaction } from '../db/transaction';
import type { Actor } from '../auth/actor';
import { queueEmail } from '../mail/outbox';
import { consumeRateLimit } from '../rate-limit';
import { mailTemplates } from '../mail/templates';
import { findEmailToken, issueEmailToken } from './email-tokens';
import { EmailAlreadyVerifiedError, UnknownVerificationTokenError, VerificationLinkExpiredError } from './errors';
import { buildUserProfile, cachedUserProfile, forgetCachedProfile } from './profile';

export const TERMS_VERSION = '2026-01';

/** GET /user/profile: the caller's profile (cached briefly: lib/users/profile.ts). */
export async function getProfile({ actor }: { actor: Actor }) {
  return cachedUserProfile(actor.user.id);
}

/** Updates the editable profile fields and returns the freshly built profile. */
export async function updateProfile({ actor }: { actor: Actor }, input: z.output<typeof UpdateUserDto>) {
  const changes = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  if (Object.keys(changes).length > 0) {
    await transaction(async (tx) => {
      await tx.update(users).set(changes).where(eq(users.id, actor.user.id));
      // Which fields, not their values: the trail cannot be erased, so it keeps no personal data.
      await recordMemberAudit(tx, actor.user.id, {
        action: 'user.profile.updated',
        target: { type: 'user', id: actor.user.id },
        metadata: { fields: Object.keys(changes).sort() },
      });
    });
  }
  forgetCachedProfile(actor.user.id);
  return buildUserProfile(actor.user.id);
}

/** Marks the email verified. Unknown token (or one for another email): 404; expired: 400. */
export async function verifyEmail(input: z.output<typeof VerifyEmailDto>) {
  const found = await findEmailToken(input.token, 'verify_email');
  if (!found || (input.email !== undefined && input.email !== found.user.email)) {
    throw new UnknownVerificationTokenError();
  }
  if (found.expired) throw new VerificationLinkExpiredError();
  const userId = found.user.id;
  await transaction(async (tx) => {
    // Used by a concurrent request since it was read: that one verified and recorded it.
    const [used] = await tx
      .delete(emailTokens)
      .where(eq(emailTokens.id, found.tokenId))
      .returning({ id: emailTokens.id });
    if (!used) throw new UnknownVerificationTokenError();
    await tx.update(users).set({ isEmailVerified: true, emailVerifiedAt: now() }).where(eq(users.id, userId));
    // The emailed token proves who verifies (the route takes no bearer token).
    await recordMemberAudit(tx, userId, {
      action: 'user.email.verified',
      target: { type: 'user', id: userId },
      actor: provenUser(userId),
    });
  });
  forgetCachedProfile(found.user.id);
  return { message: 'Email verified' };
}

/** Sends a new verification link (the previous one stops working). 400 when already verified. */
export async function resendVerificationEmail({ actor }: { actor: Actor }) {
  if (actor.user.isEmailVerified) throw new EmailAlreadyVerifiedError();
  await transaction(async (tx, afterCommit) => {
    const token = await issueEmailToken(tx, actor.user, 'verify_email');
    await queueEmail(tx, afterCommit, mailTemplates.verifyEmail(actor.user.email, actor.user.name, token));
    await recordMemberAudit(tx, actor.user.id, {
      action: 'user.verification_email.sent',
      target: { type: 'user', id: actor.user.id },
    });
  });
  return { message: `A new verification link was sent to ${actor.user.email}` };
}

/** Reset emails sent per address in one window. */
export const RESET_EMAILS_PER_ADDRESS = 3;
export const RESET_EMAIL_WINDOW_SECONDS = 3600;

/**
 * Emails a reset link. Always answered 200; `isSuccess` false for an unknown email. At most 3
 * links per address per hour (a clock-aligned window): past that the answer is the same 200 with
 * `isSuccess` true, and nothing is sent (the earlier links still work until used or expired).
 */
export async function sendForgotPasswordLink(input: z.output<typeof SendForgotPasswordLinkDto>) {
  const [user] = await db().select().from(users).where(eq(users.email, input.email)).limit(1);
  if (!user || user.deletedAt) return { isSuccess: false, message: 'No account is registered with this email' };
  if (!user.isActive || user.accountKind !== 'standard')
    return { isSuccess: false, message: 'This account cannot sign in' };
  const allowance = await consumeRateLimit([
    {
      key: `reset-email:address:${user.email}`,
      limit: RESET_EMAILS_PER_ADDRESS,
      windowSeconds: RESET_EMAIL_WINDOW_SECONDS,
    },
  ]);
  if (!allowance.allowed)
    return {
      isSuccess: true,
      message: 'A password reset link was sent recently: check your inbox, or try again later',
    };
  await transaction(async (tx, afterCommit) => {
    const token = await issueEmailToken(tx, user, 'reset_password');
    await queueEmail(tx, afterCommit, mailTemplates.resetPassword(user.email, user.name, token));
    // Anyone may ask for any address: the caller stays anonymous, the target is the member.
    await recordMemberAudit(tx, user.id, {
      action: 'user.password_reset.requested',
      target: { type: 'user', id: user.id },
    });
  });
  return { isSuccess: true, message: 'A password reset link was sent' };
}

/** Whether an email is free: taken by a user ('user') or a custodian of an extraction code ('custodian'). */
export async function checkEmailAvailability(input: z.output<typeof CheckEmailAvailabilityDto>) {
  const [row] = await db()
    .select({
      isUser: sql<boolean>`exists (select 1 from ${users} where ${users.email} = ${input.email})`,
      isCustodian: sql<boolean>`exists (select 1 from ${extractionCodes} where ${extractionCodes.custodianEmail} = ${input.email})`,
    })
    .from(sql`(select 1) as one`);
  if (row?.isUser) return { isAvailable: false, type: 'user' as const };
  if (row?.isCustodian) return { isAvailable: false, type: 'custodian' as const };
  return { isAvailable: true, type: null };
}
