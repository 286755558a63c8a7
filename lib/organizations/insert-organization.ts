import { randomBytes } from 'node:crypto';
import { ensureProcessorCustomer } from '../billing/customers';
import { startOrganizationPlan } from '../billing/organization-plan';
import { whenPaymentsConfigured } from '../billing/processor';
import type { Executor } from '../db/client';
import { organizationMembers, organizations } from '../db/schema/organizations';
import type { AfterCommit } from '../db/transaction';
import type { OrganizationRow } from './load';
import { organizationNameKey } from './name-key';
import { recomputePendingNameKeys } from './pending-name-keys';
import { isOrganizationNameTaken } from './validate-organization-name';

/** URL-safe slug of a name: lowercase ASCII words joined by dashes. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'organization';
}

/**
 * Inserts the organization with `ownerId` as owner, on the free plan, and asks for its
 * payment-processor customer after commit. Returns null when the name is taken (the unique index
 * decides, so two racing requests cannot both get it). A slug clash gets a random suffix.
 */
export async function insertOrganization(
  tx: Executor,
  afterCommit: AfterCommit,
  input: { name: string; ownerId: string; email: string },
): Promise<OrganizationRow | null> {
  const baseSlug = slugify(input.name);
  const nameKey = organizationNameKey(input.name);
  await recomputePendingNameKeys(tx);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const slug = attempt === 0 ? baseSlug : `${baseSlug}-${randomBytes(3).toString('hex')}`;
    const [organization] = await tx
      .insert(organizations)
      .values({ name: input.name, nameKey, slug, email: input.email })
      .onConflictDoNothing()
      .returning();
    if (organization) {
      await tx
        .insert(organizationMembers)
        .values({ organizationId: organization.id, userId: input.ownerId, role: 'owner' });
      await startOrganizationPlan(tx, organization.id);
      // Without payments configured, maintenance creates the customer once they are.
      afterCommit(() => whenPaymentsConfigured(() => ensureProcessorCustomer(organization.id)));
      return organization;
    }
    if (await isOrganizationNameTaken(tx, input.name)) return null;
  }
  throw new Error('Could not allocate a unique organization slug');
}
