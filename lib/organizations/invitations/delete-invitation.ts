import { eq } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { invitations } from '../../db/schema/organizations';
import { transaction } from '../../db/transaction';
import type * as z from 'zod/mini';
import type { InvitationPath } from '../../../schemas/organization/members';
import type { OrganizationContext } from '../context';
import { InvitationNotPendingError } from './errors';
import { findInvitation } from './find-invitation';

/** DELETE /organization/{orgId}/invitation/{invitationId}: pending only (400 otherwise); frees its seat. */
export async function deleteInvitation(
  { organization }: { organization: OrganizationContext },
  { invitationId }: z.output<typeof InvitationPath>,
) {
  return transaction(async (tx) => {
    const invitation = await findInvitation(tx, organization.id, invitationId);
    if (invitation.status !== 'pending') throw new InvitationNotPendingError(invitation.status);
    await tx.delete(invitations).where(eq(invitations.id, invitation.id));
    recordAudit(tx, {
      action: 'organization.invitation.deleted',
      organizationId: organization.id,
      target: { type: 'invitation', id: invitation.id },
      metadata: { email: invitation.email, role: invitation.role },
    });
    return { message: `Invitation to ${invitation.email} deleted` };
  });
}
