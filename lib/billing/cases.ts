import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { caseAccess, cases } from '../db/schema';
import { ForbiddenError, NotFoundError } from '../http/errors';

/**
 * The case of a billing request and the caller's access to it, in one query. A case of another
 * organization than the header is 403 (never data); billing needs owner or admin access to the
 * case, and opposing counsel is always refused.
 */
export async function caseForBilling(organizationId: string, caseId: string, userId: string) {
  const [row] = await db()
    .select({ case: cases, access: caseAccess.access })
    .from(cases)
    .leftJoin(caseAccess, and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, userId)))
    .where(eq(cases.id, caseId))
    .limit(1);
  if (!row || row.case.deletedAt) throw new NotFoundError('Unknown case');
  if (row.case.organizationId !== organizationId) throw new ForbiddenError('The case belongs to another organization than the one selected', 'FORBIDDEN');
  if (row.access === 'opposing_counsel') throw new ForbiddenError('Opposing counsel cannot use case billing', 'INSUFFICIENT_ROLE');
  if (row.access !== 'owner' && row.access !== 'admin') throw new ForbiddenError('Owner or admin access to the case is required', 'INSUFFICIENT_ROLE');
  return row.case;
}
