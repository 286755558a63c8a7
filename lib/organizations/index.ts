import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { organizationMembers, organizationPlans, organizations } from '../db/schema';
import { FREE_PLAN } from './plans';

type OrganizationRow = typeof organizations.$inferSelect;

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

export async function isOrganizationNameTaken(executor: Executor, name: string): Promise<boolean> {
  const [row] = await executor
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(sql`lower(${organizations.name})`, name.toLowerCase()))
    .limit(1);
  return row !== undefined;
}

/**
 * Inserts the organization with `ownerId` as owner, on the free plan. Returns null when the name
 * is taken (the unique index decides, so two racing sign-ups cannot both get it). A slug clash
 * between different names gets a random suffix.
 */
export async function insertOrganization(
  tx: Executor,
  input: { name: string; ownerId: string; email: string },
): Promise<OrganizationRow | null> {
  const baseSlug = slugify(input.name);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const slug = attempt === 0 ? baseSlug : `${baseSlug}-${randomBytes(3).toString('hex')}`;
    const [organization] = await tx
      .insert(organizations)
      .values({ name: input.name, slug, email: input.email })
      .onConflictDoNothing()
      .returning();
    if (organization) {
      await tx.insert(organizationMembers).values({ organizationId: organization.id, userId: input.ownerId, role: 'owner' });
      await tx.insert(organizationPlans).values({ organizationId: organization.id, ...FREE_PLAN, isActive: true });
      return organization;
    }
    if (await isOrganizationNameTaken(tx, input.name)) return null;
  }
  throw new Error('Could not allocate a unique organization slug');
}
