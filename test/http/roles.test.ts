import { describe, expect, it } from 'vitest';
import { ROLES_BY_RANK, type RoleRule, roleSatisfies } from '../../lib/organizations/roles';

const expected: Record<RoleRule, string[]> = {
  'any-role': [...ROLES_BY_RANK],
  'member-or-above': ['owner', 'admin', 'full_access', 'employee', 'billing', 'member'],
  'admin-or-owner': ['owner', 'admin'],
  'admin-owner-or-billing': ['owner', 'admin', 'billing'],
};

describe('role rules', () => {
  it.each(Object.entries(expected))('%s lets exactly these roles through: %j', (rule, allowed) => {
    const passing = ROLES_BY_RANK.filter((role) => roleSatisfies(role, rule as RoleRule));
    expect(passing).toEqual(allowed);
  });
});
