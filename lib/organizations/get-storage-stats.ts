import type * as z from 'zod/mini';
import { and, asc, desc, eq, isNull, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { caseAccess, cases } from '../db/schema/cases';
import { idIn } from '../ids';
import type { StorageStatsQuery } from '../../schemas/organization/organization';
import type { OrganizationContext } from './context';

/**
 * GET /organization/{orgId}/storage-stats: live cases only (not archived, not deleted), largest
 * first. A case's storage is what the plan counts of it: its files and the rows derived from them.
 * The breakdown names only the cases the caller may open (any access to the case, as
 * caseWithAccess requires), so a member never learns the names or sizes of the others; the total
 * is the organization's. With `caseIds` the total is of the named cases the caller may open, so
 * asking by id tells nothing about a case they cannot open. One query.
 */
export async function getStorageStats(
  { organization, userId }: { organization: OrganizationContext; userId: string },
  query: z.output<typeof StorageStatsQuery>,
) {
  const caseStorage = sql<number>`${cases.storageBytes} + ${cases.rowBytes}`.mapWith(Number);
  const rows = await db()
    .select({
      caseId: cases.id,
      caseName: cases.name,
      storage: caseStorage,
      opens: sql<boolean>`${caseAccess.access} is not null`,
    })
    .from(cases)
    .leftJoin(caseAccess, and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, userId)))
    .where(
      and(
        eq(cases.organizationId, organization.id),
        isNull(cases.archivedAt),
        isNull(cases.deletedAt),
        // Ids that are not UUIDs match nothing: `caseIds=abc` filters every case out.
        query.caseIds?.length ? idIn(cases.id, query.caseIds) : undefined,
      ),
    )
    .orderBy(desc(caseStorage), asc(cases.name));
  const opened = rows.filter((row) => row.opens).map(({ opens: _, ...row }) => row);
  const counted = query.caseIds?.length ? opened : rows;
  return { totalStorage: counted.reduce((sum, row) => sum + row.storage, 0), cases: opened };
}
