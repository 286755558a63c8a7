import type * as z from 'zod/mini';
import { and, eq, ne } from 'drizzle-orm';
import { db, type Executor } from '../db/client';
import { organizations } from '../db/schema/organizations';
import type { ValidateOrganizationNameDto } from '../../schemas/organization/organization';
import { hasInvisibleCharacters, organizationNameKey } from './name-key';
import { recomputePendingNameKeys } from './pending-name-keys';

/**
 * Whether another organization's name has the same key (NFKC, invisible characters, case and
 * look-alike letters folded: lib/organizations/name-key.ts).
 */
export async function isOrganizationNameTaken(executor: Executor, name: string, exceptId?: string): Promise<boolean> {
  await recomputePendingNameKeys(executor);
  const [row] = await executor
    .select({ id: organizations.id })
    .from(organizations)
    .where(
      and(eq(organizations.nameKey, organizationNameKey(name)), exceptId ? ne(organizations.id, exceptId) : undefined),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * POST /organization/validate-name: false when the name cannot be used: another organization's name
 * has the same key (case, invisible characters and look-alike letters folded), or it holds an
 * invisible character (create and rename refuse those).
 */
export async function validateOrganizationName(input: z.output<typeof ValidateOrganizationNameDto>) {
  if (hasInvisibleCharacters(input.name)) return { isValid: false };
  return { isValid: !(await isOrganizationNameTaken(db(), input.name)) };
}
