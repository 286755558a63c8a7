import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { caseAccess, cases } from '../db/schema/cases';
import { organizationMembers } from '../db/schema/organizations';
import { idEquals } from '../ids';
import type { OrganizationRole } from '../organizations/roles';
import type { CaseContext } from './context';
import { CaseAccessDeniedError, CaseInOtherOrganizationError, CaseNotFoundError, NoCaseAccessError } from './errors';
import { type CaseRule, caseRuleAllows } from './rules';

/**
 * The case and the caller's access to it, in one query. The caller must belong to the case's
 * organization and hold access to the case; otherwise 403 (an unknown or deleted case is 404, as is
 * an id that is not a UUID).
 * With `organizationId` (the header), a case of another organization is 403, never data.
 */
export async function caseWithAccess(caseId: string, userId: string, organizationId?: string): Promise<CaseContext> {
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
  if (!row || row.case.deletedAt) throw new CaseNotFoundError();
  if (organizationId && row.case.organizationId !== organizationId) throw new CaseInOtherOrganizationError();
  if (!row.orgRole || !row.access) throw new NoCaseAccessError();
  return { case: row.case, access: row.access, orgRole: row.orgRole as OrganizationRole };
}

/** Refuses (403) a caller whom `rule` (lib/cases/rules.ts) does not let through, in the rule's words. */
export function assertCaseRule(found: Pick<CaseContext, 'access' | 'orgRole'>, rule: CaseRule): void {
  if (caseRuleAllows(rule, found.access, found.orgRole)) return;
  const message = rule.deniedTo?.[found.access] ?? rule.denied;
  throw message ? new CaseAccessDeniedError(message) : new NoCaseAccessError();
}
