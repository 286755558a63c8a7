import { db, type Executor } from '../db/client';
import { organizations } from '../db/schema';
import { idEquals } from '../ids';
import { UnknownOrganizationError } from './errors';

export type OrganizationRow = typeof organizations.$inferSelect;

/** The organization's row; 404 when there is none (an id that is not a UUID names none). */
export async function loadOrganization(organizationId: string, executor: Executor = db()): Promise<OrganizationRow> {
  const [organization] = await executor
    .select()
    .from(organizations)
    .where(idEquals(organizations.id, organizationId))
    .limit(1);
  if (!organization) throw new UnknownOrganizationError();
  return organization;
}
