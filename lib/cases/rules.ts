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
  /** A path parameter naming a user: when it names the caller, any access to the case passes (giving up one's own access). */
  self?: string;
  /** The 403 message for a caller the rule refuses (a caller without any access gets the general one). */
  denied?: string;
  /** A message of its own for an access level the rule refuses. */
  deniedTo?: Partial<Record<CaseAccess, string>>;
}

const OWNER_OR_ADMIN_REQUIRED = 'Owner or admin access to the case is required';

/**
 * The case rules of the route table (`case` on an entry), enforced before the handler runs by the
 * case-context middleware (lib/http/case-context.ts). The case-access matrix (test/contract) checks
 * every route that takes a case against the rule its entry declares.
 */
export const CASE_RULES = {
  /** Reading a case and its material: any access, opposing counsel included (filtered by profile visibility). */
  read: { name: 'read', access: CASE_ACCESS_LEVELS },
  /** Renaming, archiving, granting and revoking access (revoking one's own access needs any access: `self`). */
  manage: {
    name: 'manage',
    access: ['owner', 'admin'],
    orRoles: ['owner', 'admin'],
    denied: OWNER_OR_ADMIN_REQUIRED,
  },
  /** Deleting a case. */
  delete: {
    name: 'delete',
    access: ['owner'],
    orRoles: ['owner', 'admin'],
    denied: 'Only the case owner or an organization owner or admin may delete a case',
  },
  /** Case billing (statement, Pro upgrade): owner or admin access; never opposing counsel (contract). */
  billing: {
    name: 'billing',
    access: ['owner', 'admin'],
    denied: OWNER_OR_ADMIN_REQUIRED,
    deniedTo: { opposing_counsel: 'Opposing counsel cannot use case billing' },
  },
  /** Adding evidence from the desktop extractor. */
  import: {
    name: 'import',
    access: ['owner', 'admin'],
    denied: 'Importing evidence needs owner or admin access to the case',
  },
  /** The case's chain of custody (its evidence hashes and audit events). */
  custody: {
    name: 'custody',
    access: ['owner', 'admin'],
    denied: OWNER_OR_ADMIN_REQUIRED,
  },
  /**
   * Changing tags and tagging evidence (the review extension): owner, admin or opposing counsel
   * access, each on their own side's tags; viewers may read tags but not change them.
   */
  review: {
    name: 'review',
    access: ['owner', 'admin', 'opposing_counsel'],
    denied: 'Viewers may read tags but not change them',
  },
  /** Upload links for the import's attachments: the import rule, refused in its own words. */
  upload: {
    name: 'import',
    access: ['owner', 'admin'],
    denied: 'Uploading evidence needs owner or admin access to the case',
  },
} as const satisfies Record<string, CaseRule>;

/** Whether a caller with `access` to the case (null: none) and `role` in its organization (null: not a member) passes `rule`. */
export function caseRuleAllows(rule: CaseRule, access: CaseAccess | null, role: OrganizationRole | null): boolean {
  if (!access || !role) return false;
  return rule.access.includes(access) || Boolean(rule.orRoles?.includes(role));
}
