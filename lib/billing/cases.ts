import { assertCaseRule, caseWithAccess } from '../cases/access';
import { CASE_RULES } from '../cases/rules';
import { ForbiddenError } from '../http/errors';

/**
 * The case of a billing request, checked against the billing case rule in one query. A case of
 * another organization than the header is 403 (never data); billing needs owner or admin access
 * to the case, and opposing counsel is always refused (contract).
 */
export async function caseForBilling(organizationId: string, caseId: string, userId: string) {
  const found = await caseWithAccess(caseId, userId, organizationId);
  if (found.access === 'opposing_counsel')
    throw new ForbiddenError('Opposing counsel cannot use case billing', 'INSUFFICIENT_ROLE');
  assertCaseRule(found, CASE_RULES.billing, 'Owner or admin access to the case is required');
  return found.case;
}
