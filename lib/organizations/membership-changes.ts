import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { organizationMembers, organizations } from '../db/schema/organizations';
import type { OrganizationContext } from './context';
import { LastOwnerError, OwnerRoleChangeError, UnknownOrganizationError } from './errors';
import type { OrganizationRole } from './roles';

/**
 * Serializes the membership changes of one organization (roles, removals) on its row. Without it,
 * two owners demoting or removing each other at the same time each lock only the other's
 * membership, both count two owners, and the organization is left with none.
 */
export async function lockMemberships(tx: Executor, organizationId: string): Promise<{ name: string }> {
  const [row] = await tx
    .select({ name: organizations.name })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('no key update');
  if (!row) throw new UnknownOrganizationError();
  return row;
}

/** Only an owner may give or take the owner role, and an organization always keeps one owner. */
export async function assertOwnerChangesAllowed(
  tx: Executor,
  organization: OrganizationContext,
  changes: Array<{ userId: string; from: OrganizationRole; to: OrganizationRole }>,
) {
  const touchesOwner = changes.some((c) => c.from !== c.to && (c.from === 'owner' || c.to === 'owner'));
  if (!touchesOwner) return;
  if (organization.role !== 'owner') throw new OwnerRoleChangeError();
  const [owners] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organization.id), eq(organizationMembers.role, 'owner')));
  const demoted = changes.filter((c) => c.from === 'owner' && c.to !== 'owner').length;
  const promoted = changes.filter((c) => c.from !== 'owner' && c.to === 'owner').length;
  if (owners!.n - demoted + promoted < 1) throw new LastOwnerError();
}
