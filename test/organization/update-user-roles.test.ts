import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationMembers } from '../../lib/db/schema';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

const setRoles = (caller: { accessToken?: string }, orgId: string, body: unknown) =>
  invoke(routes.updateUserRoles, { token: caller.accessToken, path: { orgId }, body });

/** userId -> role of the organization's members (all of them, or the ones listed). */
async function rolesIn(orgId: string, userIds?: string[]): Promise<Record<string, string>> {
  const rows = await db()
    .select({ userId: organizationMembers.userId, role: organizationMembers.role })
    .from(organizationMembers)
    .where(
      and(
        eq(organizationMembers.organizationId, orgId),
        userIds ? inArray(organizationMembers.userId, userIds) : undefined,
      ),
    );
  return Object.fromEntries(rows.map((r) => [r.userId, r.role]));
}

const roleInProfile = async (user: TestUser, orgId: string) => {
  const profile = expectData(await invoke(routes.getProfile, { token: user.accessToken }));
  return profile.organizations.find((o: any) => o.organization.id === orgId)?.permission.role;
};

describe('PATCH /organization/{orgId}/update-user-role', () => {
  it('sets the role of every listed member', async () => {
    // Prepare
    const owner = await createUser();
    const first = await addMember(owner.organizationId, 'member');
    const second = await addMember(owner.organizationId, 'client');
    const untouched = await addMember(owner.organizationId, 'member');
    expect(await roleInProfile(first, owner.organizationId)).toBe('member');
    // Act
    const result = await setRoles(owner, owner.organizationId, { userIds: [first.id, second.id], role: 'employee' });
    // Assess
    expect(expectData(result)).toEqual({ message: 'Role employee set for 2 member(s)' });
    expect(await rolesIn(owner.organizationId)).toEqual({
      [owner.id]: 'owner',
      [first.id]: 'employee',
      [second.id]: 'employee',
      [untouched.id]: 'member',
    });
    // The member's own (cached) profile shows the new role at once.
    expect(await roleInProfile(first, owner.organizationId)).toBe('employee');
    const page = expectData(
      await invoke(routes.listMembers, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId },
        organization: owner.organizationId,
        query: { role: 'employee' },
      }),
    );
    expect(page.total).toBe(2);
  });

  it('skips users who are not members, without error and without adding them', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const outsider = await createUser();
    const result = await setRoles(owner, owner.organizationId, {
      userIds: [outsider.id, member.id, UNKNOWN_ID],
      role: 'admin',
    });
    expect(expectData(result)).toEqual({ message: 'Role admin set for 1 member(s)' });
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'owner', [member.id]: 'admin' });
    // The outsider's own organization is untouched.
    expect(await rolesIn(outsider.organizationId)).toEqual({ [outsider.id]: 'owner' });
  });

  it('answers 200 when no listed user is a member, changing nothing', async () => {
    const owner = await createUser();
    const outsider = await createUser();
    expect(expectData(await setRoles(owner, owner.organizationId, { userIds: [outsider.id], role: 'owner' }))).toEqual({
      message: 'Role owner set for 0 member(s)',
    });
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'owner' });
  });

  it("sets the role only in this organization, not in the member's other organizations", async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    expectData(await setRoles(owner, owner.organizationId, { userIds: [member.id], role: 'client' }));
    expect(await rolesIn(member.organizationId)).toEqual({ [member.id]: 'owner' });
    expect(await rolesIn(owner.organizationId, [member.id])).toEqual({ [member.id]: 'client' });
  });

  it('lets an admin set roles below owner', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const member = await addMember(owner.organizationId, 'member');
    expectData(await setRoles(admin, owner.organizationId, { userIds: [member.id], role: 'admin' }));
    expect(await rolesIn(owner.organizationId, [member.id])).toEqual({ [member.id]: 'admin' });
  });

  it('lets an owner grant the owner role and then hand over ownership', async () => {
    const owner = await createUser();
    const successor = await addMember(owner.organizationId, 'admin');
    expectData(await setRoles(owner, owner.organizationId, { userIds: [successor.id], role: 'owner' }));
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'owner', [successor.id]: 'owner' });
    expectData(await setRoles(owner, owner.organizationId, { userIds: [owner.id], role: 'admin' }));
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'admin', [successor.id]: 'owner' });
  });

  it('answers 403 INSUFFICIENT_ROLE when an admin grants the owner role, changing nothing', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const member = await addMember(owner.organizationId, 'member');
    expectError(
      await setRoles(admin, owner.organizationId, { userIds: [member.id, admin.id], role: 'owner' }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(await rolesIn(owner.organizationId)).toEqual({
      [owner.id]: 'owner',
      [admin.id]: 'admin',
      [member.id]: 'member',
    });
  });

  it('answers 403 INSUFFICIENT_ROLE when an admin takes the owner role away, changing nothing of the request', async () => {
    const owner = await createUser();
    const coOwner = await addMember(owner.organizationId, 'owner');
    const admin = await addMember(owner.organizationId, 'admin');
    const member = await addMember(owner.organizationId, 'member');
    expectError(
      await setRoles(admin, owner.organizationId, { userIds: [member.id, coOwner.id], role: 'client' }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(await rolesIn(owner.organizationId, [coOwner.id, member.id])).toEqual({
      [coOwner.id]: 'owner',
      [member.id]: 'member',
    });
  });

  it('answers 400 LAST_OWNER when the only owner demotes themselves, changing nothing', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    expectError(
      await setRoles(owner, owner.organizationId, { userIds: [owner.id, member.id], role: 'admin' }),
      400,
      'LAST_OWNER',
    );
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'owner', [member.id]: 'member' });
  });

  it('answers 400 LAST_OWNER when every owner would be demoted in one request', async () => {
    const owner = await createUser();
    const coOwner = await addMember(owner.organizationId, 'owner');
    expectError(
      await setRoles(owner, owner.organizationId, { userIds: [owner.id, coOwner.id], role: 'member' }),
      400,
      'LAST_OWNER',
    );
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'owner', [coOwner.id]: 'owner' });
  });

  it('keeps an owner when two owners demote each other at the same time', async () => {
    for (let round = 0; round < 5; round += 1) {
      // Prepare
      const first = await createUser();
      const second = await addMember(first.organizationId, 'owner');
      // Act
      const results = await Promise.all([
        setRoles(first, first.organizationId, { userIds: [second.id], role: 'admin' }),
        setRoles(second, first.organizationId, { userIds: [first.id], role: 'admin' }),
      ]);
      // Assess: one wins; the other is refused, as the last owner (400) or as no longer an owner (403).
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      const refused = results.find((r) => r.status !== 200)!;
      expectError(refused, refused.status, refused.status === 400 ? 'LAST_OWNER' : 'INSUFFICIENT_ROLE');
      expect([400, 403]).toContain(refused.status);
      const roles = Object.values(await rolesIn(first.organizationId));
      expect(roles.filter((role) => role === 'owner')).toHaveLength(1);
    }
  });

  it.each([
    ['no body fields', {}, ['body.userIds', 'body.role']],
    ['userIds not a list', { userIds: 'abc', role: 'member' }, ['body.userIds']],
    ['an empty userIds list', { userIds: [], role: 'member' }, ['body.userIds']],
    ['a userId over 200 characters', { userIds: ['u'.repeat(201)], role: 'member' }, ['body.userIds.0']],
    [
      'more than 100 userIds',
      { userIds: Array.from({ length: 101 }, () => UNKNOWN_ID), role: 'member' },
      ['body.userIds'],
    ],
    ['no role', { userIds: [UNKNOWN_ID] }, ['body.role']],
    ['an unknown role', { userIds: [UNKNOWN_ID], role: 'superuser' }, ['body.role']],
    ['a role of the wrong type', { userIds: [UNKNOWN_ID], role: 3 }, ['body.role']],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body, fields) => {
    const owner = await createUser();
    expectError(await setRoles(owner, owner.organizationId, body), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await setRoles(owner, 'not-a-uuid', { userIds: [owner.id], role: 'owner' }), 403, 'NOT_A_MEMBER');
  });

  it('skips a userId that is not a uuid, like any non-member, and sets the others', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const data = expectData(
      await setRoles(owner, owner.organizationId, { userIds: ['u-1', member.id], role: 'admin' }),
    );
    expect(data.message).toContain('1 member(s)');
    const [row] = await db()
      .select({ role: organizationMembers.role })
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, owner.organizationId), eq(organizationMembers.userId, member.id)),
      );
    expect(row!.role).toBe('admin');
  });
});

describeSecurity(routes.updateUserRoles, {
  request: async ({ organizationId }) => ({
    path: { orgId: organizationId },
    body: { userIds: [(await addMember(organizationId, 'member')).id], role: 'admin' },
  }),
  unchanged: async ({ organizationId }, request) => {
    const [userId] = (request.body as { userIds: string[] }).userIds;
    expect(await rolesIn(organizationId, [userId!])).toEqual({ [userId!]: 'member' });
  },
});

describe('PATCH /organization/{orgId}/update-user-role security', () => {
  it('answers 403 NOT_A_MEMBER to the owner of another organization, changing nothing', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const stranger = await createUser();
    const result = await setRoles(stranger, owner.organizationId, { userIds: [member.id, stranger.id], role: 'owner' });
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect(await rolesIn(owner.organizationId)).toEqual({ [owner.id]: 'owner', [member.id]: 'member' });
  });

  it.each([['full_access'], ['employee'], ['billing'], ['member'], ['user'], ['client']] as const)(
    'answers 403 INSUFFICIENT_ROLE to a %s raising their own role, changing nothing',
    async (role) => {
      const owner = await createUser();
      const caller = await addMember(owner.organizationId, role);
      expectError(
        await setRoles(caller, owner.organizationId, { userIds: [caller.id], role: 'admin' }),
        403,
        'INSUFFICIENT_ROLE',
      );
      expect(await rolesIn(owner.organizationId, [caller.id])).toEqual({ [caller.id]: role });
    },
  );

  it('changes the role for an automation token with members:write', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const membersWriter = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['members:write'] } }),
    );
    expectData(
      await setRoles({ accessToken: membersWriter.token }, owner.organizationId, {
        userIds: [member.id],
        role: 'admin',
      }),
    );
    expect(await rolesIn(owner.organizationId, [member.id])).toEqual({ [member.id]: 'admin' });
  });
});
