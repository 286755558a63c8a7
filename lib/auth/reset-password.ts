import type * as z from 'zod/mini';
import type { ResetPasswordDto } from '../../schemas/auth/password-reset';
import { recordMemberAudit } from '../audit/record';
import { provenUser } from '../audit/scope';
import { transaction } from '../db/transaction';
import { queueEmail } from '../mail/outbox';
import { mailTemplates } from '../mail/templates';
import { hashPassword } from '../secrets';
import { findEmailToken } from '../users/email-tokens';
import { setPassword } from '../users/set-password';
import { endSessionsOfUser } from './sessions';

/**
 * Sets a new password with an emailed reset token, ends every credential of the account (sign-in
 * sessions and legacy tokens deleted, automation tokens revoked) and sends a password-changed
 * email. Always 200; an unknown or expired token gives `isSuccess: false`.
 */
export async function resetPassword(input: z.output<typeof ResetPasswordDto>) {
  const found = await findEmailToken(input.token, 'reset_password');
  if (!found || found.user.email !== input.email) return { isSuccess: false, message: 'The reset link is invalid' };
  if (found.expired) return { isSuccess: false, message: 'The reset link has expired' };
  const passwordHash = await hashPassword(input.password);
  const user = found.user;
  await transaction(async (tx, afterCommit) => {
    await setPassword(tx, afterCommit, user.id, passwordHash, { voidResetLinks: true });
    const endedCredentials = await endSessionsOfUser(tx, user.id);
    await queueEmail(tx, afterCommit, mailTemplates.passwordChanged(user.email, user.name));
    // The emailed token proves who resets (the route takes no bearer token).
    await recordMemberAudit(tx, user.id, {
      action: 'user.password.reset',
      target: { type: 'user', id: user.id },
      actor: provenUser(user.id),
      metadata: { endedCredentials },
    });
  });
  return { isSuccess: true, message: 'Your password was changed' };
}
