import type * as z from 'zod/mini';
import { and, eq } from 'drizzle-orm';
import { recordAudit } from '../audit/record';
import { organizationMembers } from '../db/schema/organizations';
import { users } from '../db/schema/users';
import { transaction } from '../db/transaction';
import type { Actor } from '../auth/actor';
import { idEquals } from '../ids';
import type { MemberPath } from '../../schemas/organization/members';
import { forgetCachedProfile } from '../users/profile';
import type { OrganizationContext } from './context';
import { UserNotMemberError } from './errors';
import { endMembership } from './end-membership';
import { handOverSoleOwnedCases } from '../cases/hand-over-sole-owned-cases';
import { assertOwnerChangesAllowed, lockMemberships } from './membership-changes';

/**
 * DELETE /organization/{orgId}/user/{userId}: removes the member, their invitations and case access
 * here; frees the seat. Any member may remove themselves (leave), whatever their role and the plan;
 * removing someone else needs org admin or owner and an active plan. The last owner can neither
 * leave nor be removed (400 LAST_OWNER). Cases the member was the only owner of go to the removing
 * owner, or (self-removal, or an admin removing) the organization's oldest remaining owner, in the
 * same transaction. A fixed number of statements. One `organization.member.removed` event, naming
 * the cases the member lost access to and those handed over.
 */
export async function removeOrganizationUser(
  { actor, organization }: { actor: Actor; organization: OrganizationContext },
  { userId: userIdSent }: z.output<typeof MemberPath>,
) {
  // UUIDs compare case-insensitively; stored ids are lowercase.
  const userId = userIdSent.toLowerCase();
  // Who may remove whom is the route's rule (admin or owner and an active plan, or `self`: lib/http/organization-context.ts).
  const leaving = userId === actor.user.id;
  await transaction(async (tx) => {
    await lockMemberships(tx, organization.id);
    const [member] = await tx
      .select({ role: organizationMembers.role, email: users.email })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(and(eq(organizationMembers.organizationId, organization.id), idEquals(organizationMembers.userId, userId)))
      .for('update');
    // An id that is not a UUID names no member; past this point userId is a member's id.
    if (!member) throw new UserNotMemberError();
    await assertOwnerChangesAllowed(tx, organization, [{ userId, from: member.role, to: 'client' }]);
    const handedOver = await handOverSoleOwnedCases(
      tx,
      organization.id,
      userId,
      !leaving && organization.role === 'owner' ? actor.user.id : null,
    );
    const revoked = await endMembership(tx, organization.id, { userId, email: member.email });
    recordAudit(tx, {
      action: 'organization.member.removed',
      organizationId: organization.id,
      target: { type: 'user', id: userId },
      metadata: {
        email: member.email,
        role: member.role,
        left: leaving,
        // Who may see a case's evidence is part of its custody.
        caseAccessRemoved: revoked,
        casesHandedOver: handedOver,
      },
    });
  });
  forgetCachedProfile(userId);
  return { message: 'The user was removed from the organization' };
}
