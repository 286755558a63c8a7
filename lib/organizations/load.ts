import { db, type Executor } from '../db/client';
import { organizations } from '../db/schema/organizations';
import { idEquals } from '../ids';
import { UnknownOrganizationError } from './errors';

export type OrganizationRow = typeof organizations.$inferSelect;

/**
 * The organization's row; 404 when there is none (an id that is not a UUID names none). `lock`
 * holds it for the rest of the transaction (FOR NO KEY UPDATE: members and plans may still refer to it).
 */
export async function loadOrganization(
  organizationId: string,
  executor: Executor = db(),
  options: { lock?: boolean } = {},
): Promise<OrganizationRow> {
  const query = executor.select().from(organizations).where(idEquals(organizations.id, organizationId)).limit(1);
  const [organization] = await (options.lock ? query.for('no key update') : query);
  if (!organization) throw new UnknownOrganizationError();
  return organization;
}
