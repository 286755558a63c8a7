import type { cases } from '../db/schema/cases';
import type { OrganizationRole } from '../organizations/roles';
import type { CaseAccess } from './rules';

/**
 * The case a request acts on, resolved and checked against the route's case rule before the
 * handler runs (lib/http/case-context.ts): the stored row (its id is the stored form, whatever
 * letter case was sent), the caller's access to it and their role in its organization.
 */
export interface CaseContext {
  case: typeof cases.$inferSelect;
  access: CaseAccess;
  orgRole: OrganizationRole;
}
