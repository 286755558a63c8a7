import { eq } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { addMonths, now } from '../../clock';
import { invitations } from '../../db/schema/organizations';
import { transaction } from '../../db/transaction';
import type * as z from 'zod/mini';
import type { InvitationPath } from '../../../schemas/organization/members';
import type { Actor } from '../../auth/actor';
import { queueEmails } from '../../mail/outbox';
import { mailTemplates } from '../../mail/templates';
import { lockPlanRow } from '../allowances';
import type { OrganizationContext } from '../context';
import { loadOrganization } from '../load';
import { hashToken, newOpaqueToken } from '../../secrets';
import { InvitationAlreadyAcceptedError } from './errors';
import { INVITATION_TOKEN_PREFIX, reserveSeats } from './invite-to-organization';
import { assertMayInvite } from './invite-users';
import { findInvitation } from './find-invitation';

/** POST .../resend: new one-month token and email; a rejected invitation becomes pending again (and takes a seat). */
export async function resendInvitation(
  { organization, actor }: { organization: OrganizationContext; actor: Actor },
  { invitationId }: z.output<typeof InvitationPath>,
) {
  return transaction(async (tx, afterCommit) => {
    await lockPlanRow(tx, organization.id);
    const invitation = await findInvitation(tx, organization.id, invitationId);
    if (invitation.status === 'accepted') throw new InvitationAlreadyAcceptedError();
    assertMayInvite(organization.role, invitation.role);
    const holdsSeat = invitation.status === 'pending' && invitation.expiresAt > now();
    await reserveSeats(tx, organization.id, holdsSeat ? [] : [invitation.email], 'refuse');
    const token = newOpaqueToken(INVITATION_TOKEN_PREFIX);
    await tx
      .update(invitations)
      .set({
        status: 'pending',
        tokenHash: hashToken(token),
        expiresAt: addMonths(now(), 1),
        rejectionReason: null,
        invitedById: actor.user.id,
      })
      .where(eq(invitations.id, invitation.id));
    recordAudit(tx, {
      action: 'organization.invitation.resent',
      organizationId: organization.id,
      target: { type: 'invitation', id: invitation.id },
      metadata: {
        email: invitation.email,
        role: invitation.role,
        previousStatus: holdsSeat ? 'pending' : invitation.status === 'pending' ? 'expired' : invitation.status,
      },
    });
    const org = await loadOrganization(organization.id, tx);
    await queueEmails(tx, afterCommit, [
      mailTemplates.invitation(invitation.email, org.name, org.id, actor.user.name, token),
    ]);
    return { message: `Invitation sent again to ${invitation.email}` };
  });
}
