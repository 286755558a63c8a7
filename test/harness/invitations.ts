import { and, eq } from 'drizzle-orm';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { invitations } from '../../lib/db/schema';
import { type TestUser, tokenFromEmail, uniqueEmail } from './actors';
import { expectData, invoke } from './invoke';

/** The subject of the invitation email. */
export const INVITED = 'You are invited to join';

/**
 * Invites an address (a fresh one unless `email` says) into `owner`'s organization through
 * POST /organization/{orgId}/invitations, with `role` when given: the address as stored
 * (lowercase), the invitation row and the token the email carries.
 */
export async function invited(owner: TestUser, options: { email?: string; role?: string } = {}) {
  const email = options.email ?? uniqueEmail('invitee');
  const body = options.role ? { emails: [email], role: options.role } : { emails: [email] };
  expectData(
    await invoke(routes.inviteUsers, { token: owner.accessToken, path: { orgId: owner.organizationId }, body }),
    201,
  );
  const [row] = await db()
    .select()
    .from(invitations)
    .where(and(eq(invitations.organizationId, owner.organizationId), eq(invitations.email, email.toLowerCase())));
  return { email: email.toLowerCase(), row: row!, token: tokenFromEmail(email, INVITED) };
}
