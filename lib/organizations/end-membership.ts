import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { caseAccess, cases, invitations, organizationMembers } from '../db/schema';

/**
 * Ends a membership, as when a member is removed or leaves: invitations to the member's address
 * here, their access to the organization's cases and the membership itself go. Three statements,
 * whatever the number of cases. Answers the case access removed (part of each case's custody, for
 * the `organization.member.removed` event); handing over the cases the member alone owned is the
 * caller's (lib/organizations/sole-owned-cases.ts), before this.
 */
export async function endMembership(
  tx: Executor,
  organizationId: string,
  member: { userId: string; email: string },
): Promise<Array<{ caseId: string; access: string }>> {
  await tx
    .delete(invitations)
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.email, member.email)));
  const revoked = await tx
    .delete(caseAccess)
    .where(
      and(
        eq(caseAccess.userId, member.userId),
        inArray(
          caseAccess.caseId,
          tx.select({ id: cases.id }).from(cases).where(eq(cases.organizationId, organizationId)),
        ),
      ),
    )
    .returning({ caseId: caseAccess.caseId, access: caseAccess.access });
  await tx
    .delete(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, member.userId)));
  return revoked;
}
