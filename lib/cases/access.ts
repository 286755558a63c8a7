import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { caseAccess, cases, organizationMembers } from '../db/schema';
import { ForbiddenError, NotFoundError } from '../http/errors';
import { idEquals } from '../ids';
import type { OrganizationRole } from '../organizations/roles';
import { type CaseRule, caseRuleAllows } from './rules';

export type CaseAccessLevel = (typeof caseAccess.$inferSelect)['access'];
type CaseRow = typeof cases.$inferSelect;

/**
 * The case and the caller's access to it, in one query. The caller must belong to the case's
 * organization and hold access to the case; otherwise 403 (an unknown or deleted case is 404, as is
 * an id that is not a UUID).
 * With `organizationId` (the header), a case of another organization is 403, never data.
 */
export async function caseWithAccess(
  caseId: string,
  userId: string,
  organizationId?: string,
): Promise<{ case: CaseRow; access: CaseAccessLevel; orgRole: string }> {
  const [row] = await db()
    .select({ case: cases, access: caseAccess.access, orgRole: organizationMembers.role })
    .from(cases)
    .leftJoin(caseAccess, and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, userId)))
    .leftJoin(
      organizationMembers,
      and(eq(organizationMembers.organizationId, cases.organizationId), eq(organizationMembers.userId, userId)),
    )
    .where(idEquals(cases.id, caseId))
    .limit(1);
  if (!row || row.case.deletedAt) throw new NotFoundError('Unknown case');
  if (organizationId && row.case.organizationId !== organizationId)
    throw new ForbiddenError('The case belongs to another organization');
  if (!row.orgRole || !row.access) throw new ForbiddenError('You have no access to this case', 'INSUFFICIENT_ROLE');
  return { case: row.case, access: row.access, orgRole: row.orgRole };
}

/** Refuses (403) a caller whom the route's case rule (lib/cases/rules.ts) does not let through. */
export function assertCaseRule(
  found: { access: CaseAccessLevel; orgRole: string },
  rule: CaseRule,
  message: string,
): void {
  if (!caseRuleAllows(rule, found.access, found.orgRole as OrganizationRole))
    throw new ForbiddenError(message, 'INSUFFICIENT_ROLE');
}
