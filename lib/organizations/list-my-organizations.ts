import { asc, eq } from 'drizzle-orm';
import { billingSummary } from '../billing/summary';
import { db } from '../db/client';
import { organizationMembers, organizations } from '../db/schema/organizations';
import type { Actor } from '../auth/actor';
import { toPage } from '../paging';
import { planUsageByOrganization, toActivePlanEntity } from './active-plan';
import { toOrganizationEntity } from './entity';

/** GET /organization/user/organizations: every organization of the caller in one page, with its active plan. */
export async function listMyOrganizations({ actor }: { actor: Actor }) {
  const rows = await db()
    .select({ organization: organizations, role: organizationMembers.role })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .where(eq(organizationMembers.userId, actor.user.id))
    .orderBy(asc(organizationMembers.createdAt));
  const usage = await planUsageByOrganization(
    db(),
    rows.map((r) => r.organization.id),
  );
  const records = rows.map(({ organization, role }) => {
    const plan = usage.get(organization.id);
    return {
      organization: toOrganizationEntity(organization, plan ? toActivePlanEntity(plan) : null),
      permission: { role },
      billing: billingSummary(organization),
    };
  });
  return toPage({ offset: 0, size: Math.max(records.length, 1), mode: 'page' }, records.length, records);
}
