import { and, eq } from 'drizzle-orm';
import { now } from '../../clock';
import type { Executor } from '../../db/client';
import { invitations } from '../../db/schema/organizations';
import { idEquals } from '../../ids';
import { hashToken } from '../../secrets';
import { InvitationExpiredError, InvitationNoLongerPendingError, UnknownInvitationError } from './errors';

export async function findInvitation(executor: Executor, organizationId: string, invitationId: string) {
  const [invitation] = await executor
    .select()
    .from(invitations)
    .where(and(idEquals(invitations.id, invitationId), eq(invitations.organizationId, organizationId)))
    .limit(1)
    .for('update');
  if (!invitation) throw new UnknownInvitationError();
  return invitation;
}

/** The invitation of an emailed token, checked against the organization and email; 404/400 per the contract. */
export async function invitationForToken(tx: Executor, organizationId: string, token: string, email: string) {
  const [invitation] = await tx
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.tokenHash, hashToken(token)),
        eq(invitations.organizationId, organizationId),
        eq(invitations.email, email),
      ),
    )
    .limit(1)
    .for('update');
  if (!invitation) throw new UnknownInvitationError();
  if (invitation.status !== 'pending') throw new InvitationNoLongerPendingError(invitation.status);
  if (invitation.expiresAt <= now()) throw new InvitationExpiredError();
  return invitation;
}
