import { and, eq } from 'drizzle-orm';
import { endCaseAccessInOrganization } from '../cases/end-case-access';
import type { Executor } from '../db/client';
import { invitations, organizationMembers } from '../db/schema/organizations';

/**
 * Ends a membership, as when a member is removed or leaves: invitations to the member's address
 * here, their access to the organization's cases (lib/cases owns it) and the membership itself go.
 * Three statements, whatever the number of cases. Answers the case access removed (part of each
 * case's custody, for the `organization.member.removed` event); handing over the cases the member
 * alone owned is the caller's (lib/cases/hand-over-sole-owned-cases.ts), before this.
 */
export async function endMembership(
  tx: Executor,
  organizationId: string,
  member: { userId: string; email: string },
): Promise<Array<{ caseId: string; access: string }>> {
  await tx
    .delete(invitations)
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.email, member.email)));
  const revoked = await endCaseAccessInOrganization(tx, organizationId, member.userId);
  await tx
    .delete(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, member.userId)));
  return revoked;
}
