import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { organizationMembers, organizationPlans } from '../db/schema/organizations';
import { idEquals } from '../ids';
import type { OrganizationRole } from './roles';

/**
 * The caller's role in an organization and whether its plan is active, in one query; undefined if
 * not a member (also for an organization id that is not a UUID: it names none).
 */
export async function findMembership(
  organizationId: string,
  userId: string,
): Promise<{ role: OrganizationRole; planActive: boolean } | undefined> {
  const [row] = await db()
    .select({ role: organizationMembers.role, planActive: organizationPlans.isActive })
    .from(organizationMembers)
    .leftJoin(organizationPlans, eq(organizationPlans.organizationId, organizationMembers.organizationId))
    .where(and(idEquals(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)))
    .limit(1);
  return row ? { role: row.role, planActive: row.planActive === true } : undefined;
}
