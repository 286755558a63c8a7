import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { caseAccess, cases } from '../db/schema/cases';

/**
 * Removes a user's access to every case of an organization, as when their membership ends
 * (lib/organizations/end-membership.ts). One statement, whatever the number of cases. Answers the
 * access removed: part of each case's custody, for the caller's audit event.
 */
export async function endCaseAccessInOrganization(
  tx: Executor,
  organizationId: string,
  userId: string,
): Promise<Array<{ caseId: string; access: string }>> {
  return tx
    .delete(caseAccess)
    .where(
      and(
        eq(caseAccess.userId, userId),
        inArray(
          caseAccess.caseId,
          tx.select({ id: cases.id }).from(cases).where(eq(cases.organizationId, organizationId)),
        ),
      ),
    )
    .returning({ caseId: caseAccess.caseId, access: caseAccess.access });
}
