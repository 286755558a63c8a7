import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { organizationMembers, organizationPlans } from '../db/schema';
import type { OrganizationRole } from './roles';

/** The caller's role in an organization and whether its plan is active, in one query; undefined if not a member. */
export async function findMembership(organizationId: string, userId: string): Promise<{ role: OrganizationRole; planActive: boolean } | undefined> {
  const [row] = await db()
    .select({ role: organizationMembers.role, planActive: organizationPlans.isActive })
    .from(organizationMembers)
    .leftJoin(organizationPlans, eq(organizationPlans.organizationId, organizationMembers.organizationId))
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)))
    .limit(1);
  return row ? { role: row.role, planActive: row.planActive === true } : undefined;
}
