import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess, invitations, organizationMembers, organizationPlans } from '../../lib/db/schema';
import {
  addMember,
  createCaseRow,
  createUser,
  type TestUser,
  tokenFromEmail,
  uniqueEmail,
  updateUserRow,
} from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { seatsUsed } from '../harness/organizations';
import { UNKNOWN_ID } from '../harness/ids';

const INVITED = 'You are invited to join';

const removeUser = (caller: { accessToken?: string }, orgId: string, userId: string) =>
  invoke(routes.removeOrganizationUser, { token: caller.accessToken, path: { orgId, userId } });

const isMember = async (orgId: string, userId: string) =>
  (
    await db()
      .select()
      .from(organizationMembers)
      .where(and(eq(organizationMembers.organizationId, orgId), eq(organizationMembers.userId, userId)))
  ).length === 1;

const invite = async (inviter: TestUser, orgId: string, emails: string[], role = 'member') =>
  expectData(
    await invoke(routes.inviteUsers, { token: inviter.accessToken, path: { orgId }, body: { emails, role } }),
    201,
  );

/** An existing, verified user who joined `owner`'s organization through an invitation (the accepted invitation row stays). */
async function joinedByInvitation(owner: TestUser): Promise<TestUser> {
  const user = await createUser();
  // Verified: accepting for an unverified account's address takes that account over instead (issue 12).
  await updateUserRow(user.id, { isEmailVerified: true, emailVerifiedAt: new Date() });
  await invite(owner, owner.organizationId, [user.email]);
  const token = tokenFromEmail(user.email, INVITED);
  expectData(
    await invoke(routes.acceptInvitation, {
      path: { orgId: owner.organizationId },
      body: { token, email: user.email },
    }),
    201,
  );
  return user;
}

const accessOf = (userId: string, caseIds: string[]) =>
  db()
    .select()
    .from(caseAccess)
    .where(and(eq(caseAccess.userId, userId), inArray(caseAccess.caseId, caseIds)));

describe('DELETE /organization/{orgId}/user/{userId}', () => {
  it('removes the membership, their invitations and case access in this organization only, and frees a seat', async () => {
    // Prepare
    const owner = await createUser();
    const leaver = await joinedByInvitation(owner);
    const colleague = await addMember(owner.organizationId, 'member');
    const here = [await createCaseRow(owner.organizationId), await createCaseRow(owner.organizationId)];
    const elsewhere = await createCaseRow(leaver.organizationId);
    await db()
      .insert(caseAccess)
      .values([
        { caseId: here[0]!.id, userId: leaver.id, access: 'admin' },
        { caseId: here[1]!.id, userId: leaver.id, access: 'viewer' },
        { caseId: elsewhere.id, userId: leaver.id, access: 'owner' },
        { caseId: here[0]!.id, userId: colleague.id, access: 'viewer' },
      ]);
    // An invitation of the leaver's address to another organization is not this organization's.
    const third = await createUser();
    await invite(third, third.organizationId, [leaver.email]);
    expect(
      await db()
        .select()
        .from(invitations)
        .where(and(eq(invitations.organizationId, owner.organizationId), eq(invitations.email, leaver.email))),
    ).toHaveLength(1);
    expect(await seatsUsed(owner)).toBe(3);
    // Act
    const result = await removeUser(owner, owner.organizationId, leaver.id);
    // Assess
    expect(expectData(result)).toEqual({ message: 'The user was removed from the organization' });
    expect(await isMember(owner.organizationId, leaver.id)).toBe(false);
    expect(await isMember(leaver.organizationId, leaver.id)).toBe(true);
    expect(
      await db()
        .select()
        .from(invitations)
        .where(and(eq(invitations.organizationId, owner.organizationId), eq(invitations.email, leaver.email))),
    ).toHaveLength(0);
    expect(
      await db()
        .select()
        .from(invitations)
        .where(and(eq(invitations.organizationId, third.organizationId), eq(invitations.email, leaver.email))),
    ).toHaveLength(1);
    expect(
      await accessOf(
        leaver.id,
        here.map((c) => c.id),
      ),
    ).toHaveLength(0);
    expect(await accessOf(leaver.id, [elsewhere.id])).toEqual([expect.objectContaining({ access: 'owner' })]);
    expect(await accessOf(colleague.id, [here[0]!.id])).toHaveLength(1);
    expect(await seatsUsed(owner)).toBe(2);
    // The removed user no longer reaches the organization.
    expectError(
      await invoke(routes.getOrganization, { token: leaver.accessToken, path: { orgId: owner.organizationId } }),
      403,
      'NOT_A_MEMBER',
    );
    const profile = expectData(await invoke(routes.getProfile, { token: leaver.accessToken }));
    expect(profile.organizations.map((o: any) => o.organization.id)).toEqual([leaver.organizationId]);
  });

  it('deletes a pending re-invitation of the removed address too, so the seat it held is freed', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    // A pending invitation row for a member's address (written directly: the invite route skips members).
    await db()
      .insert(invitations)
      .values({
        organizationId: owner.organizationId,
        email: member.email,
        role: 'admin',
        tokenHash: `hash-${member.id}`,
        expiresAt: new Date(Date.now() + 86_400_000),
      });
    expect(await seatsUsed(owner)).toBe(3);
    expectData(await removeUser(owner, owner.organizationId, member.id));
    expect(await seatsUsed(owner)).toBe(1);
  });

  it('lets the removed user be invited again', async () => {
    const owner = await createUser();
    const leaver = await joinedByInvitation(owner);
    expectData(await removeUser(owner, owner.organizationId, leaver.id));
    await invite(owner, owner.organizationId, [leaver.email]);
    const [row] = await db()
      .select()
      .from(invitations)
      .where(and(eq(invitations.organizationId, owner.organizationId), eq(invitations.email, leaver.email)));
    expect(row).toMatchObject({ status: 'pending', invitedUserId: leaver.id });
  });

  it('lets the freed seat be used by a new invitation', async () => {
    const owner = await createUser();
    const members = [await addMember(owner.organizationId, 'member'), await addMember(owner.organizationId, 'member')];
    await invite(owner, owner.organizationId, [uniqueEmail('p'), uniqueEmail('p')]);
    const next = uniqueEmail('next');
    expectError(
      await invoke(routes.inviteUsers, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId },
        body: { emails: [next] },
      }),
      403,
      'SEAT_LIMIT_REACHED',
    );
    expectData(await removeUser(owner, owner.organizationId, members[0]!.id));
    await invite(owner, owner.organizationId, [next]);
  });

  it('lets an admin remove a member, and an owner remove an admin', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const member = await addMember(owner.organizationId, 'full_access');
    expectData(await removeUser(admin, owner.organizationId, member.id));
    expect(await isMember(owner.organizationId, member.id)).toBe(false);
    expectData(await removeUser(owner, owner.organizationId, admin.id));
    expect(await isMember(owner.organizationId, admin.id)).toBe(false);
  });

  it('lets an admin leave (remove themselves)', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    expectData(await removeUser(admin, owner.organizationId, admin.id));
    expect(await isMember(owner.organizationId, admin.id)).toBe(false);
  });

  it('lets an owner remove another owner, or leave while another owner stays', async () => {
    const owner = await createUser();
    const second = await addMember(owner.organizationId, 'owner');
    const third = await addMember(owner.organizationId, 'owner');
    expectData(await removeUser(owner, owner.organizationId, second.id));
    expectData(await removeUser(owner, owner.organizationId, owner.id));
    expect(await isMember(owner.organizationId, owner.id)).toBe(false);
    expect(await isMember(owner.organizationId, third.id)).toBe(true);
  });

  it('answers 400 LAST_OWNER when the last owner would be removed', async () => {
    const owner = await createUser();
    await addMember(owner.organizationId, 'admin');
    expectError(await removeUser(owner, owner.organizationId, owner.id), 400, 'LAST_OWNER');
    expect(await isMember(owner.organizationId, owner.id)).toBe(true);
  });

  it('keeps an owner when two owners remove each other at the same time', async () => {
    for (let round = 0; round < 5; round += 1) {
      // Prepare
      const first = await createUser();
      const second = await addMember(first.organizationId, 'owner');
      // Act
      const results = await Promise.all([
        removeUser(first, first.organizationId, second.id),
        removeUser(second, first.organizationId, first.id),
      ]);
      // Assess: one wins; the other is refused (last owner, or no longer a member).
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      const refused = results.find((r) => r.status !== 200)!;
      expectError(refused, refused.status, refused.status === 400 ? 'LAST_OWNER' : 'NOT_A_MEMBER');
      expect([400, 403]).toContain(refused.status);
      const owners = await db()
        .select()
        .from(organizationMembers)
        .where(
          and(eq(organizationMembers.organizationId, first.organizationId), eq(organizationMembers.role, 'owner')),
        );
      expect(owners).toHaveLength(1);
    }
  });

  it('answers 403 INSUFFICIENT_ROLE when an admin removes an owner', async () => {
    const owner = await createUser();
    await addMember(owner.organizationId, 'owner');
    const admin = await addMember(owner.organizationId, 'admin');
    expectError(await removeUser(admin, owner.organizationId, owner.id), 403, 'INSUFFICIENT_ROLE');
    expect(await isMember(owner.organizationId, owner.id)).toBe(true);
  });

  it.each([
    ['a member of another organization', async () => (await createUser()).id],
    ['an unknown user id', async () => UNKNOWN_ID],
  ])('answers 404 for %s, removing nothing', async (_label, target) => {
    const owner = await createUser();
    const userId = await target();
    expectError(await removeUser(owner, owner.organizationId, userId), 404, 'NOT_FOUND');
    expect(await seatsUsed(owner)).toBe(1);
  });

  it('answers 404 when the user was already removed', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    expectData(await removeUser(owner, owner.organizationId, member.id));
    expectError(await removeUser(owner, owner.organizationId, member.id), 404, 'NOT_FOUND');
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await removeUser(owner, 'not-a-uuid', UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it('answers 404 NOT_FOUND for a userId that is not a uuid, as for a user who is no member', async () => {
    const owner = await createUser();
    expectError(await removeUser(owner, owner.organizationId, 'not-a-uuid'), 404, 'NOT_FOUND');
  });

  it.each([
    ['orgId', { orgId: 'o'.repeat(201), userId: UNKNOWN_ID }, ['path.orgId']],
    ['userId', { orgId: UNKNOWN_ID, userId: 'u'.repeat(201) }, ['path.userId']],
    ['both', { orgId: 'o'.repeat(201), userId: 'u'.repeat(201) }, ['path.orgId', 'path.userId']],
  ])('answers 400 VALIDATION_FAILED for a %s over 200 characters', async (_label, path, fields) => {
    const owner = await createUser();
    expectError(await removeUser(owner, path.orgId, path.userId), 400, 'VALIDATION_FAILED', fields);
  });
});

describeSecurity(routes.removeOrganizationUser, {
  request: async ({ organizationId }) => ({
    path: { orgId: organizationId, userId: (await addMember(organizationId, 'client')).id },
  }),
  unchanged: async ({ organizationId, user, role }, request) => {
    expect(await isMember(organizationId, request.path!.userId!)).toBe(true);
    if (role) expect(await isMember(organizationId, user.id)).toBe(true);
  },
});

describe('DELETE /organization/{orgId}/user/{userId} security', () => {
  it('answers 403 NOT_A_MEMBER to the owner of another organization, even for a non-member target', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    // Nor can they probe who is a member: a non-member target answers the same.
    expectError(await removeUser(stranger, owner.organizationId, UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it('removes for an automation token with members:write', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const membersWriter = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['members:write'] } }),
    );
    expectData(await removeUser({ accessToken: membersWriter.token }, owner.organizationId, member.id));
    expect(await isMember(owner.organizationId, member.id)).toBe(false);
  });
});

describe('DELETE /organization/{orgId}/user/{ownId}: leaving', () => {
  it.each([['full_access'], ['employee'], ['billing'], ['member'], ['user'], ['client']] as const)(
    'lets a %s leave',
    async (role) => {
      // Prepare
      const owner = await createUser();
      const leaver = await addMember(owner.organizationId, role);
      const kase = await createCaseRow(owner.organizationId);
      await db().insert(caseAccess).values({ caseId: kase.id, userId: leaver.id, access: 'viewer' });
      // Act
      const result = await removeUser(leaver, owner.organizationId, leaver.id);
      // Assess
      expect(expectData(result)).toEqual({ message: 'The user was removed from the organization' });
      expect(await isMember(owner.organizationId, leaver.id)).toBe(false);
      expect(await accessOf(leaver.id, [kase.id])).toHaveLength(0);
      expect(await isMember(leaver.organizationId, leaver.id)).toBe(true);
      expectError(
        await invoke(routes.getOrganization, { token: leaver.accessToken, path: { orgId: owner.organizationId } }),
        403,
        'NOT_A_MEMBER',
      );
    },
  );

  it('lets a member leave while the plan is inactive', async () => {
    const owner = await createUser();
    const leaver = await addMember(owner.organizationId, 'member');
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expectData(await removeUser(leaver, owner.organizationId, leaver.id));
    expect(await isMember(owner.organizationId, leaver.id)).toBe(false);
  });

  it('answers 400 LAST_OWNER when the last owner leaves, even with other members', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    expectError(await removeUser(owner, owner.organizationId, owner.id), 400, 'LAST_OWNER');
    expect(await isMember(owner.organizationId, owner.id)).toBe(true);
    expect(await isMember(owner.organizationId, admin.id)).toBe(true);
  });
});

describe('DELETE /organization/{orgId}/user/{userId}: the cases of a removed case owner', () => {
  /** Cases in `owner`'s organization: one the leaver alone owns, one they co-own, one they only view, one owned by someone else. */
  async function casesOf(owner: TestUser, leaver: TestUser) {
    const colleague = await addMember(owner.organizationId, 'member');
    const [sole, shared, viewed, other] = await Promise.all(
      [1, 2, 3, 4].map(() => createCaseRow(owner.organizationId)),
    );
    await db()
      .insert(caseAccess)
      .values([
        { caseId: sole!.id, userId: leaver.id, access: 'owner' },
        { caseId: shared!.id, userId: leaver.id, access: 'owner' },
        { caseId: shared!.id, userId: colleague.id, access: 'owner' },
        { caseId: viewed!.id, userId: leaver.id, access: 'viewer' },
        { caseId: viewed!.id, userId: colleague.id, access: 'owner' },
        { caseId: other!.id, userId: colleague.id, access: 'owner' },
      ]);
    return { sole: sole!, shared: shared!, viewed: viewed!, other: other!, colleague };
  }

  const ownersOf = async (caseId: string) =>
    (
      await db()
        .select()
        .from(caseAccess)
        .where(and(eq(caseAccess.caseId, caseId), eq(caseAccess.access, 'owner')))
    )
      .map((row) => row.userId)
      .sort();

  it('gives owner access of the cases the removed member alone owned to the owner who removed them, and nothing else', async () => {
    // Prepare
    const owner = await createUser();
    const leaver = await addMember(owner.organizationId, 'member');
    const { sole, shared, viewed, other, colleague } = await casesOf(owner, leaver);
    // Act
    expectData(await removeUser(owner, owner.organizationId, leaver.id));
    // Assess
    expect(await ownersOf(sole.id)).toEqual([owner.id]);
    expect(await ownersOf(shared.id)).toEqual([colleague.id]);
    expect(await ownersOf(viewed.id)).toEqual([colleague.id]);
    expect(await ownersOf(other.id)).toEqual([colleague.id]);
    expect(await accessOf(owner.id, [shared.id, viewed.id, other.id])).toHaveLength(0);
  });

  it("raises the remover's lower access on such a case to owner", async () => {
    const owner = await createUser();
    const leaver = await addMember(owner.organizationId, 'admin');
    const kase = await createCaseRow(owner.organizationId);
    await db()
      .insert(caseAccess)
      .values([
        { caseId: kase.id, userId: leaver.id, access: 'owner' },
        { caseId: kase.id, userId: owner.id, access: 'viewer' },
      ]);
    expectData(await removeUser(owner, owner.organizationId, leaver.id));
    expect(await accessOf(owner.id, [kase.id])).toEqual([expect.objectContaining({ access: 'owner' })]);
  });

  it.each([
    ['the member leaves', 'self'],
    ['an admin removes them', 'admin'],
  ] as const)('gives them to the oldest owner of the organization when %s', async (_label, remover) => {
    // Prepare: two owners, the first one the oldest
    const owner = await createUser();
    const younger = await addMember(owner.organizationId, 'owner');
    const admin = await addMember(owner.organizationId, 'admin');
    const leaver = await addMember(owner.organizationId, 'employee');
    const { sole } = await casesOf(owner, leaver);
    // Act
    expectData(await removeUser(remover === 'self' ? leaver : admin, owner.organizationId, leaver.id));
    // Assess
    expect(await ownersOf(sole.id)).toEqual([owner.id]);
    expect(await accessOf(younger.id, [sole.id])).toHaveLength(0);
    expect(await accessOf(admin.id, [sole.id])).toHaveLength(0);
  });

  it('gives them to the remaining owner when an owner leaves', async () => {
    const owner = await createUser();
    const leavingOwner = await addMember(owner.organizationId, 'owner');
    const { sole } = await casesOf(owner, leavingOwner);
    expectData(await removeUser(leavingOwner, owner.organizationId, leavingOwner.id));
    expect(await ownersOf(sole.id)).toEqual([owner.id]);
  });

  it('sends the same number of SQL statements for one such case as for five', async () => {
    const owner = await createUser();
    const statementsFor = async (caseCount: number) => {
      const leaver = await addMember(owner.organizationId, 'member');
      const owned = await Promise.all(Array.from({ length: caseCount }, () => createCaseRow(owner.organizationId)));
      await db()
        .insert(caseAccess)
        .values(owned.map((kase) => ({ caseId: kase.id, userId: leaver.id, access: 'owner' as const })));
      const { result, queries } = await countQueries(() => removeUser(owner, owner.organizationId, leaver.id));
      expectData(result);
      for (const kase of owned) expect(await ownersOf(kase.id)).toEqual([owner.id]);
      return queries;
    };
    expect(await statementsFor(5)).toBe(await statementsFor(1));
  });
});
