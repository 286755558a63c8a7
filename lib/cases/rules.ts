import type { OrganizationRole } from '../organizations/roles';

/** A member's access to one case, highest first. */
export const CASE_ACCESS_LEVELS = ['owner', 'admin', 'viewer', 'opposing_counsel'] as const;

export type CaseAccess = (typeof CASE_ACCESS_LEVELS)[number];

/**
 * Who may use a route that acts on one case. The caller must belong to the case's organization and
 * hold some access to the case; then one of `access` passes, or any access together with one of
 * `orRoles` in the organization (an organization admin managing a case they can see).
 */
export interface CaseRule {
  /** A short name for the API description: read, manage, delete, billing, import. */
  name: string;
  access: readonly CaseAccess[];
  orRoles?: readonly OrganizationRole[];
}

/**
 * The case rules of the route table (`case` on an entry). `caseWithAccess` (lib/cases/access.ts)
 * is the read rule itself; the others are applied with `assertCaseRule` in lib/cases,
 * lib/material and lib/billing. The case-access matrix (test/contract) checks every route that
 * takes a case against the rule its entry declares.
 */
export const CASE_RULES = {
  /** Reading a case and its material: any access, opposing counsel included (filtered by profile visibility). */
  read: { name: 'read', access: CASE_ACCESS_LEVELS },
  /** Renaming, archiving, granting and revoking access (revoking one's own access needs any access). */
  manage: { name: 'manage', access: ['owner', 'admin'], orRoles: ['owner', 'admin'] },
  /** Deleting a case. */
  delete: { name: 'delete', access: ['owner'], orRoles: ['owner', 'admin'] },
  /** Case billing (statement, Pro upgrade): owner or admin access; never opposing counsel (contract). */
  billing: { name: 'billing', access: ['owner', 'admin'] },
  /** Adding evidence from the desktop extractor. */
  import: { name: 'import', access: ['owner', 'admin'] },
} as const satisfies Record<string, CaseRule>;

/** Whether a caller with `access` to the case (null: none) and `role` in its organization (null: not a member) passes `rule`. */
export function caseRuleAllows(rule: CaseRule, access: CaseAccess | null, role: OrganizationRole | null): boolean {
  if (!access || !role) return false;
  return rule.access.includes(access) || Boolean(rule.orRoles?.includes(role));
}
