import type * as z from 'zod/mini';
import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { organizationMembers, organizations } from '../db/schema/organizations';
import type { Actor } from '../auth/actor';
import type { SlugPath } from '../../schemas/organization/organization';
import type { OrganizationContext } from './context';
import { NotAMemberError } from './errors';
import { loadOrganization } from './load';
import { toOrganizationDetails } from './entity';

/** GET /organization/{orgId}: details without the active plan. */
export async function getOrganization({ organization }: { organization: OrganizationContext }) {
  return toOrganizationDetails(await loadOrganization(organization.id), organization.role);
}

/** GET /organization/slug/{slug}: 403 for an unknown slug as for an organization the caller is not in. */
export async function getOrganizationBySlug({ actor }: { actor: Actor }, { slug }: z.output<typeof SlugPath>) {
  const [row] = await db()
    .select({ organization: organizations, role: organizationMembers.role })
    .from(organizations)
    .innerJoin(
      organizationMembers,
      and(eq(organizationMembers.organizationId, organizations.id), eq(organizationMembers.userId, actor.user.id)),
    )
    .where(eq(organizations.slug, slug))
    .limit(1);
  if (!row) throw new NotAMemberError();
  return toOrganizationDetails(row.organization, row.role);
}
