/** Organization roles, highest first: the order that defines "member role or above". */
export const ROLES_BY_RANK = [
  'owner',
  'admin',
  'full_access',
  'employee',
  'billing',
  'member',
  'user',
  'client',
] as const;

export type OrganizationRole = (typeof ROLES_BY_RANK)[number];

/** The rules the contract states per operation. */
export type RoleRule = 'any-role' | 'member-or-above' | 'admin-or-owner' | 'admin-owner-or-billing';

/** Higher is more: owner 8 ... client 1. */
export const roleRank = (role: OrganizationRole): number => ROLES_BY_RANK.length - ROLES_BY_RANK.indexOf(role);
const rank = roleRank;

export function roleSatisfies(role: OrganizationRole, rule: RoleRule): boolean {
  switch (rule) {
    case 'any-role':
      return true;
    case 'member-or-above':
      return rank(role) >= rank('member');
    case 'admin-or-owner':
      return role === 'owner' || role === 'admin';
    case 'admin-owner-or-billing':
      return role === 'owner' || role === 'admin' || role === 'billing';
  }
}
