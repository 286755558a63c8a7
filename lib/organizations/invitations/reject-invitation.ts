import { and, eq, inArray } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { type AuditActor, provenUser } from '../../audit/scope';
import { invitations, organizationMembers } from '../../db/schema/organizations';
import { users } from '../../db/schema/users';
import { transaction } from '../../db/transaction';
import type * as z from 'zod/mini';
import type { RejectOrganizationInvitationRequestDto } from '../../../schemas/organization/members';
import type { OrganizationIdPath } from '../../../schemas/organization/organization';
import { queueEmails } from '../../mail/outbox';
import { mailTemplates } from '../../mail/templates';
import { loadOrganization } from '../load';
import { invitationForToken } from './find-invitation';

/** POST .../invitation/reject (no auth): marks it rejected (freeing its seat) and tells the organization. */
export async function rejectInvitation(
  input: z.output<typeof OrganizationIdPath> & z.output<typeof RejectOrganizationInvitationRequestDto>,
): Promise<void> {
  const organizationId = input.orgId;
  await transaction(async (tx, afterCommit) => {
    const organization = await loadOrganization(organizationId, tx);
    const invitation = await invitationForToken(tx, organization.id, input.token, input.email);
    await tx
      .update(invitations)
      .set({ status: 'rejected', rejectionReason: input.reason ?? null })
      .where(eq(invitations.id, invitation.id));
    // The emailed token proves the mailbox; a verified account of that address is who acts.
    const [addressee] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.email, invitation.email), eq(users.isEmailVerified, true)))
      .limit(1);
    const actor: AuditActor | undefined = addressee ? provenUser(addressee.id) : undefined;
    recordAudit(tx, {
      action: 'organization.invitation.rejected',
      organizationId: organization.id,
      target: { type: 'invitation', id: invitation.id },
      metadata: { email: invitation.email, role: invitation.role, reason: input.reason ?? null },
      actor,
    });
    const recipients = await tx
      .select({ email: users.email })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(
        and(
          eq(organizationMembers.organizationId, organization.id),
          inArray(organizationMembers.role, ['owner', 'admin']),
        ),
      );
    const addresses = new Set([...recipients.map((r) => r.email), ...(organization.email ? [organization.email] : [])]);
    await queueEmails(
      tx,
      afterCommit,
      [...addresses].map((to) =>
        mailTemplates.invitationRejected(to, organization.name, invitation.email, input.reason ?? null),
      ),
    );
  });
}
