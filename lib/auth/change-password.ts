import { eq } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { ChangePasswordDto } from '../../schemas/user/update-user';
import { recordMemberAudit } from '../audit/record';
import { db } from '../db/client';
import { users } from '../db/schema/users';
import { transaction } from '../db/transaction';
import { queueEmail } from '../mail/outbox';
import { mailTemplates } from '../mail/templates';
import { hashPassword, verifyPassword } from '../secrets';
import { WrongPasswordError } from '../users/errors';
import { buildUserProfile } from '../users/profile';
import { setPassword } from '../users/set-password';
import type { Actor } from './actor';
import { endSessionsOfUser } from './sessions';

/**
 * Changes the password after checking the old one, ends the user's other sign-in sessions and
 * every legacy token (the credential making the request stays), and sends a password-changed
 * email. Scoped automation tokens survive a change: they are listed and revocable at /auth/tokens.
 * Returns the freshly built profile.
 */
export async function changePassword({ actor }: { actor: Actor }, input: z.output<typeof ChangePasswordDto>) {
  const [user] = await db().select().from(users).where(eq(users.id, actor.user.id)).limit(1);
  if (!user || !(await verifyPassword(input.oldPassword, user.passwordHash))) {
    throw new WrongPasswordError();
  }
  const passwordHash = await hashPassword(input.newPassword);
  await transaction(async (tx, afterCommit) => {
    await setPassword(tx, afterCommit, user.id, passwordHash);
    const endedCredentials = await endSessionsOfUser(tx, user.id, {
      kinds: ['login', 'legacy'],
      exceptSessionId: actor.session.id,
    });
    await queueEmail(tx, afterCommit, mailTemplates.passwordChanged(user.email, user.name));
    await recordMemberAudit(tx, user.id, {
      action: 'user.password.changed',
      target: { type: 'user', id: user.id },
      metadata: { endedCredentials },
    });
  });
  return buildUserProfile(user.id);
}
