import { eq } from 'drizzle-orm';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationMembers, organizations } from '../../lib/db/schema';
import type { OrganizationRole } from '../../lib/organizations/roles';
import type { TestUser } from './actors';
import { expectData, invoke } from './invoke';

/** The organization's row as stored. */
export async function organizationRow(organizationId: string) {
  const [row] = await db().select().from(organizations).where(eq(organizations.id, organizationId));
  return row!;
}

/** The seats `owner`'s organization uses, as GET /organization/{orgId}/usages-stat answers them. */
export const seatsUsed = async (owner: TestUser) =>
  expectData(
    await invoke(routes.getOrganizationUsage, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
  ).seatsUsed as number;

/** Makes a member row of `user` in `organizationId` (for users who belong to two organizations). */
export async function joinOrganization(organizationId: string, user: TestUser, role: OrganizationRole): Promise<void> {
  await db().insert(organizationMembers).values({ organizationId, userId: user.id, role });
}
