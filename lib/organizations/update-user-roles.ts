import type * as z from 'zod/mini';
import { and, eq, inArray } from 'drizzle-orm';
import { recordAudit } from '../audit/record';
import { organizationMembers } from '../db/schema/organizations';
import { transaction } from '../db/transaction';
import { idIn } from '../ids';
import type { UpdateOrganizationUserAccessDto } from '../../schemas/organization/members';
import { forgetCachedProfile } from '../users/profile';
import type { OrganizationContext } from './context';
import { assertOwnerChangesAllowed, lockMemberships } from './membership-changes';

/**
 * PATCH /organization/{orgId}/update-user-role: sets the role of the listed members; non-members are
 * skipped. One `organization.member.role_changed` per member whose role differed.
 */
export async function updateUserRoles(
  { organization }: { organization: OrganizationContext },
  input: z.output<typeof UpdateOrganizationUserAccessDto>,
) {
  const updated = await transaction(async (tx) => {
    await lockMemberships(tx, organization.id);
    const members = await tx
      .select({ userId: organizationMembers.userId, role: organizationMembers.role })
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, organization.id), idIn(organizationMembers.userId, input.userIds)),
      )
      .for('update');
    await assertOwnerChangesAllowed(
      tx,
      organization,
      members.map((m) => ({ userId: m.userId, from: m.role, to: input.role })),
    );
    const changed = members.filter((m) => m.role !== input.role);
    if (changed.length === 0) return members.length;
    await tx
      .update(organizationMembers)
      .set({ role: input.role })
      .where(
        and(
          eq(organizationMembers.organizationId, organization.id),
          inArray(
            organizationMembers.userId,
            changed.map((m) => m.userId),
          ),
        ),
      );
    for (const member of changed)
      recordAudit(tx, {
        action: 'organization.member.role_changed',
        organizationId: organization.id,
        target: { type: 'user', id: member.userId },
        metadata: { from: member.role, to: input.role },
      });
    return members.length;
  });
  for (const userId of input.userIds) forgetCachedProfile(userId);
  return { message: `Role ${input.role} set for ${updated} member(s)` };
}
