import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationMembers, organizations, users } from '../../lib/db/schema';
import {
  addMember,
  createUser,
  emailsTo,
  type TestUser,
  tokenFromEmail,
  uniqueEmail,
  updateUserRow,
} from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

type Role = (typeof organizationMembers.$inferInsert)['role'];

const updateUsers = (caller: { accessToken?: string }, orgId: string, body: unknown) =>
  invoke(routes.updateOrganizationUsers, { token: caller.accessToken, path: { orgId }, body });

/** A member of `orgId` who belongs to no other organization (the organization they registered with is gone). */
async function soleMember(orgId: string, role: Role = 'member', name?: string): Promise<TestUser> {
  const user = await createUser(name ? { name } : {});
  await db().delete(organizations).where(eq(organizations.id, user.organizationId));
  await db().insert(organizationMembers).values({ organizationId: orgId, userId: user.id, role });
  return user;
}

const account = async (userId: string) => (await db().select().from(users).where(eq(users.id, userId)))[0]!;

async function rolesIn(orgId: string, userIds: string[]): Promise<Record<string, string>> {
  const rows = await db()
    .select({ userId: organizationMembers.userId, role: organizationMembers.role })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, orgId), inArray(organizationMembers.userId, userIds)));
  return Object.fromEntries(rows.map((r) => [r.userId, r.role]));
}

/** What a failed request must leave as it was: the accounts and roles of the people involved. */
async function snapshot(orgId: string, people: TestUser[]) {
  const accounts = await Promise.all(people.map((p) => account(p.id)));
  return {
    accounts: accounts.map((a) => ({ id: a.id, name: a.name, email: a.email, isEmailVerified: a.isEmailVerified })),
    roles: await rolesIn(
      orgId,
      people.map((p) => p.id),
    ),
  };
}

describe('PATCH /organization/{orgId}/user', () => {
  it('changes roles, and the name and email of members who belong to no other organization', async () => {
    // Prepare
    const owner = await createUser();
    const multi = await addMember(owner.organizationId, 'member');
    const sole = await soleMember(owner.organizationId, 'client', 'Sam Sole');
    await updateUserRow(sole.id, { isEmailVerified: true, emailVerifiedAt: new Date() });
    const newEmail = uniqueEmail('renamed');
    // Act
    const result = await updateUsers(owner, owner.organizationId, {
      users: [
        { userId: multi.id, role: 'employee' },
        { userId: sole.id, role: 'admin', name: '  Samantha Sole ', email: newEmail.toUpperCase() },
      ],
    });
    // Assess
    expect(expectData(result)).toEqual({ message: '2 member(s) updated' });
    expect(await rolesIn(owner.organizationId, [multi.id, sole.id])).toEqual({
      [multi.id]: 'employee',
      [sole.id]: 'admin',
    });
    expect(await account(sole.id)).toMatchObject({
      name: 'Samantha Sole',
      email: newEmail,
      isEmailVerified: false,
      emailVerifiedAt: null,
    });
    // The multi-organization member's account is untouched, and so is their role elsewhere.
    expect(await account(multi.id)).toMatchObject({ name: multi.name, email: multi.email });
    expect(await rolesIn(multi.organizationId, [multi.id])).toEqual({ [multi.id]: 'owner' });
    // The account now signs in with the new address only, and its profile shows the change at once.
    expectError(
      await invoke(routes.login, { body: { email: sole.email, password: sole.password } }),
      401,
      'INVALID_CREDENTIALS',
    );
    const login = expectData(await invoke(routes.login, { body: { email: newEmail, password: sole.password } }));
    expect(login.userProfile).toMatchObject({
      id: sole.id,
      name: 'Samantha Sole',
      email: newEmail,
      isEmailVerified: false,
    });
    const profile = expectData(await invoke(routes.getProfile, { token: login.accessToken }));
    expect(profile).toMatchObject({ name: 'Samantha Sole', email: newEmail });
  });

  it('sends the same number of SQL statements for one entry as for five (roles and names, and login emails)', async () => {
    // Prepare: five sole members, each to get a new role and name
    const owner = await createUser();
    const people = await Promise.all(Array.from({ length: 5 }, () => soleMember(owner.organizationId)));
    const entry = (person: TestUser) => ({
      userId: person.id,
      role: 'employee' as const,
      name: `Renamed ${person.id.slice(-4)}`,
    });
    // Act
    const one = await countQueries(() => updateUsers(owner, owner.organizationId, { users: [entry(people[0]!)] }));
    const five = await countQueries(() => updateUsers(owner, owner.organizationId, { users: people.map(entry) }));
    // Assess
    expectData(one.result);
    expectData(five.result);
    expect(one.queries).toBeGreaterThan(3);
    expect(five.queries).toBe(one.queries);
    // Login emails: ending the members' sessions and tokens is two statements for all of them.
    const moveOne = await countQueries(() =>
      updateUsers(owner, owner.organizationId, { users: [{ userId: people[0]!.id, email: uniqueEmail('bulk') }] }),
    );
    const moveFive = await countQueries(() =>
      updateUsers(owner, owner.organizationId, {
        users: people.map((p) => ({ userId: p.id, email: uniqueEmail('bulk') })),
      }),
    );
    expectData(moveOne.result);
    expectData(moveFive.result);
    expect(moveFive.queries).toBe(moveOne.queries);
    const accounts = await Promise.all(people.map((p) => account(p.id)));
    expect(
      accounts.every((a) => a.name.startsWith('Renamed') && a.email.startsWith('bulk') && !a.isEmailVerified),
    ).toBe(true);
    expect(
      new Set(
        Object.values(
          await rolesIn(
            owner.organizationId,
            people.map((p) => p.id),
          ),
        ),
      ),
    ).toEqual(new Set(['employee']));
  });

  it('merges entries for the same member, later fields winning', async () => {
    const owner = await createUser();
    const sole = await soleMember(owner.organizationId, 'member', 'First Name');
    expectData(
      await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: sole.id, role: 'employee', name: 'Early' },
          { userId: sole.id, name: 'Late' },
        ],
      }),
    );
    expect((await account(sole.id)).name).toBe('Late');
    expect((await rolesIn(owner.organizationId, [sole.id]))[sole.id]).toBe('employee');
  });

  it('voids the links emailed to the old address when the email changes', async () => {
    const owner = await createUser();
    const sole = await soleMember(owner.organizationId);
    const verification = tokenFromEmail(sole.email, 'Verify');
    expectData(
      await updateUsers(owner, owner.organizationId, { users: [{ userId: sole.id, email: uniqueEmail('moved') }] }),
    );
    expectError(await invoke(routes.verifyEmail, { body: { token: verification } }), 404, 'NOT_FOUND');
    expect((await account(sole.id)).isEmailVerified).toBe(false);
  });

  it('keeps the account verified and its links valid when the email sent is the one it already has', async () => {
    const owner = await createUser();
    const sole = await soleMember(owner.organizationId);
    await updateUserRow(sole.id, { isEmailVerified: true, emailVerifiedAt: new Date() });
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: sole.email } }));
    const resetToken = tokenFromEmail(sole.email, 'Reset');
    expectData(
      await updateUsers(owner, owner.organizationId, {
        users: [{ userId: sole.id, name: 'Same Address', email: sole.email.toUpperCase() }],
      }),
    );
    expect(await account(sole.id)).toMatchObject({ name: 'Same Address', email: sole.email, isEmailVerified: true });
    const result = expectData(
      await invoke(routes.resetPassword, {
        body: { token: resetToken, email: sole.email, password: 'a-brand-new-password' },
      }),
    );
    expect(result.isSuccess).toBe(true);
  });

  it('changes only the name when only the name is given', async () => {
    const owner = await createUser();
    const sole = await soleMember(owner.organizationId, 'employee');
    expectData(await updateUsers(owner, owner.organizationId, { users: [{ userId: sole.id, name: 'Only Name' }] }));
    expect(await account(sole.id)).toMatchObject({ name: 'Only Name', email: sole.email });
    expect(await rolesIn(owner.organizationId, [sole.id])).toEqual({ [sole.id]: 'employee' });
  });

  it('lets an admin change members', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const member = await addMember(owner.organizationId, 'member');
    expectData(await updateUsers(admin, owner.organizationId, { users: [{ userId: member.id, role: 'billing' }] }));
    expect(await rolesIn(owner.organizationId, [member.id])).toEqual({ [member.id]: 'billing' });
  });

  it('lets an owner hand the owner role over', async () => {
    const owner = await createUser();
    const successor = await addMember(owner.organizationId, 'admin');
    expectData(
      await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: successor.id, role: 'owner' },
          { userId: owner.id, role: 'admin' },
        ],
      }),
    );
    expect(await rolesIn(owner.organizationId, [owner.id, successor.id])).toEqual({
      [owner.id]: 'admin',
      [successor.id]: 'owner',
    });
  });

  it('keeps an owner when two owners demote each other at the same time', async () => {
    for (let round = 0; round < 5; round += 1) {
      const first = await createUser();
      const second = await addMember(first.organizationId, 'owner');
      const results = await Promise.all([
        updateUsers(first, first.organizationId, { users: [{ userId: second.id, role: 'member' }] }),
        updateUsers(second, first.organizationId, { users: [{ userId: first.id, role: 'member' }] }),
      ]);
      // One wins; the other is refused as the last owner (400) or as no longer an owner (403).
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      const refused = results.find((r) => r.status !== 200)!;
      expectError(refused, refused.status, refused.status === 400 ? 'LAST_OWNER' : 'INSUFFICIENT_ROLE');
      const roles = Object.values(await rolesIn(first.organizationId, [first.id, second.id]));
      expect(roles.filter((role) => role === 'owner')).toHaveLength(1);
    }
  });

  describe('all or nothing: one failing entry applies none of the others', () => {
    it('answers 404 when a user is not a member', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const sole = await soleMember(owner.organizationId);
      const outsider = await createUser();
      const before = await snapshot(owner.organizationId, [member, sole, outsider]);
      const result = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: member.id, role: 'admin' },
          { userId: sole.id, name: 'Should Not Stick' },
          { userId: outsider.id, role: 'admin' },
        ],
      });
      expectError(result, 404, 'NOT_FOUND');
      expect(await snapshot(owner.organizationId, [member, sole, outsider])).toEqual(before);
      expect(await rolesIn(owner.organizationId, [outsider.id])).toEqual({});
    });

    it('answers 404 for an unknown user id', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      expectError(
        await updateUsers(owner, owner.organizationId, {
          users: [
            { userId: member.id, role: 'admin' },
            { userId: UNKNOWN_ID, role: 'admin' },
          ],
        }),
        404,
        'NOT_FOUND',
      );
      expect(await rolesIn(owner.organizationId, [member.id])).toEqual({ [member.id]: 'member' });
    });

    it.each([
      ['name', { name: 'Renamed Elsewhere' }],
      ['email', { email: 'moved.elsewhere@example.com' }],
    ])(
      'answers 403 MEMBER_OF_OTHER_ORGANIZATIONS for a %s change of a member of another organization',
      async (_label, change) => {
        const owner = await createUser();
        const sole = await soleMember(owner.organizationId);
        const multi = await addMember(owner.organizationId, 'member');
        const before = await snapshot(owner.organizationId, [sole, multi]);
        const result = await updateUsers(owner, owner.organizationId, {
          users: [
            { userId: sole.id, name: 'Should Not Stick', role: 'admin' },
            { userId: multi.id, ...change },
          ],
        });
        expectError(result, 403, 'MEMBER_OF_OTHER_ORGANIZATIONS');
        expect(await snapshot(owner.organizationId, [sole, multi])).toEqual(before);
      },
    );

    it('changes the role of a member of another organization when the form re-sends the name and email the account already has', async () => {
      // Prepare
      const owner = await createUser();
      const multi = await addMember(owner.organizationId, 'member');
      const before = await account(multi.id);
      // Act
      const result = await updateUsers(owner, owner.organizationId, {
        users: [{ userId: multi.id, role: 'employee', name: before.name, email: before.email.toUpperCase() }],
      });
      // Assess: no account change, so no 403; the role is applied and the account is untouched.
      expectData(result);
      expect(await rolesIn(owner.organizationId, [multi.id])).toEqual({ [multi.id]: 'employee' });
      expect(await account(multi.id)).toEqual(before);
    });

    it('answers 400 NOTHING_TO_CHANGE for an entry with none of role, name or email', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const sole = await soleMember(owner.organizationId);
      const before = await snapshot(owner.organizationId, [member, sole]);
      const result = await updateUsers(owner, owner.organizationId, {
        users: [{ userId: sole.id, name: 'Should Not Stick' }, { userId: member.id }],
      });
      expectError(result, 400, 'NOTHING_TO_CHANGE');
      expect(result.body.error.message).toContain('users[1]');
      expect(await snapshot(owner.organizationId, [member, sole])).toEqual(before);
    });

    it('answers 400 EMAIL_TAKEN when the new email belongs to another account (in any case)', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const sole = await soleMember(owner.organizationId);
      const elsewhere = await createUser();
      const before = await snapshot(owner.organizationId, [member, sole, elsewhere]);
      const result = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: member.id, role: 'admin' },
          { userId: sole.id, name: 'Should Not Stick', email: elsewhere.email.toUpperCase() },
        ],
      });
      expectError(result, 400, 'EMAIL_TAKEN');
      expect(await snapshot(owner.organizationId, [member, sole, elsewhere])).toEqual(before);
    });

    it('answers 400 EMAIL_TAKEN when one request gives the same new email twice', async () => {
      const owner = await createUser();
      const first = await soleMember(owner.organizationId);
      const second = await soleMember(owner.organizationId);
      const before = await snapshot(owner.organizationId, [first, second]);
      const email = uniqueEmail('twice');
      const result = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: first.id, email },
          { userId: second.id, email: email.toUpperCase() },
        ],
      });
      expectError(result, 400, 'EMAIL_TAKEN');
      expect(await snapshot(owner.organizationId, [first, second])).toEqual(before);
    });

    it('answers 400 LAST_OWNER when the only owner would lose the role', async () => {
      const owner = await createUser();
      const sole = await soleMember(owner.organizationId);
      const before = await snapshot(owner.organizationId, [owner, sole]);
      const result = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: sole.id, name: 'Should Not Stick', role: 'admin' },
          { userId: owner.id, role: 'admin' },
        ],
      });
      expectError(result, 400, 'LAST_OWNER');
      expect(await snapshot(owner.organizationId, [owner, sole])).toEqual(before);
    });

    it("answers 403 INSUFFICIENT_ROLE when an admin or an owner changes an owner's email or name (nobody ranks above an owner)", async () => {
      // Prepare: an organization whose second owner belongs to no other organization
      const owner = await createUser();
      const secondOwner = await soleMember(owner.organizationId, 'owner');
      const admin = await addMember(owner.organizationId, 'admin');
      const member = await soleMember(owner.organizationId, 'member');
      const before = await snapshot(owner.organizationId, [secondOwner, member]);
      // Act / Assess: a password reset on a changed address would take the account.
      for (const caller of [admin, owner]) {
        for (const change of [{ email: uniqueEmail('taken-over') }, { name: 'Renamed Owner' }]) {
          expectError(
            await updateUsers(caller, owner.organizationId, {
              users: [
                { userId: member.id, name: 'Should Not Stick' },
                { userId: secondOwner.id, ...change },
              ],
            }),
            403,
            'INSUFFICIENT_ROLE',
          );
        }
      }
      expect(await snapshot(owner.organizationId, [secondOwner, member])).toEqual(before);
    });

    it('answers 403 INSUFFICIENT_ROLE when an admin gives or takes the owner role', async () => {
      const owner = await createUser();
      const admin = await addMember(owner.organizationId, 'admin');
      const member = await addMember(owner.organizationId, 'member');
      const before = await snapshot(owner.organizationId, [owner, member]);
      expectError(
        await updateUsers(admin, owner.organizationId, {
          users: [
            { userId: member.id, role: 'employee' },
            { userId: owner.id, role: 'admin' },
          ],
        }),
        403,
        'INSUFFICIENT_ROLE',
      );
      expectError(
        await updateUsers(admin, owner.organizationId, { users: [{ userId: member.id, role: 'owner' }] }),
        403,
        'INSUFFICIENT_ROLE',
      );
      expect(await snapshot(owner.organizationId, [owner, member])).toEqual(before);
    });
  });

  it.each([
    ['no users', {}, ['body.users']],
    ['users not a list', { users: { userId: UNKNOWN_ID } }, ['body.users']],
    ['an empty list', { users: [] }, ['body.users']],
    [
      'more than 100 entries',
      { users: Array.from({ length: 101 }, () => ({ userId: UNKNOWN_ID, role: 'member' })) },
      ['body.users'],
    ],
    ['an entry without userId', { users: [{ role: 'member' }] }, ['body.users.0.userId']],
    ['a userId over 200 characters', { users: [{ userId: 'u'.repeat(201), role: 'member' }] }, ['body.users.0.userId']],
    ['an unknown role', { users: [{ userId: UNKNOWN_ID, role: 'boss' }] }, ['body.users.0.role']],
    ['a bad email', { users: [{ userId: UNKNOWN_ID, email: 'nope' }] }, ['body.users.0.email']],
    [
      'an email over 254 characters',
      { users: [{ userId: UNKNOWN_ID, email: `${'x'.repeat(250)}@example.com` }] },
      ['body.users.0.email'],
    ],
    ['a blank name', { users: [{ userId: UNKNOWN_ID, name: '  ' }] }, ['body.users.0.name']],
    ['a name over 100 characters', { users: [{ userId: UNKNOWN_ID, name: 'n'.repeat(101) }] }, ['body.users.0.name']],
    ['a name of the wrong type', { users: [{ userId: UNKNOWN_ID, name: 7 }] }, ['body.users.0.name']],
    ['a name with a NUL character', { users: [{ userId: UNKNOWN_ID, name: 'Nul\u0000Name' }] }, ['body.users.0.name']],
    [
      'bad fields in two entries',
      {
        users: [
          { userId: 'u'.repeat(201), role: 'member' },
          { userId: UNKNOWN_ID, role: 'x' },
        ],
      },
      ['body.users.0.userId', 'body.users.1.role'],
    ],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body, fields) => {
    const owner = await createUser();
    expectError(await updateUsers(owner, owner.organizationId, body), 400, 'VALIDATION_FAILED', fields);
  });

  it('ignores fields it does not know (a password or isSuperAdmin in an entry, notify beside users) and applies the role', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const before = (await db().select().from(users).where(eq(users.id, member.id)))[0]!;
    const body = {
      users: [{ userId: member.id, role: 'employee', password: 'taken-over', isSuperAdmin: true }],
      notify: true,
    };
    expectData(await updateUsers(owner, owner.organizationId, body));
    const after = (await db().select().from(users).where(eq(users.id, member.id)))[0]!;
    expect(after).toMatchObject({ passwordHash: before.passwordHash, isSuperAdmin: false });
    const [membership] = await db()
      .select()
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, owner.organizationId), eq(organizationMembers.userId, member.id)),
      );
    expect(membership!.role).toBe('employee');
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(
      await updateUsers(owner, 'not-a-uuid', { users: [{ userId: owner.id, role: 'owner' }] }),
      403,
      'NOT_A_MEMBER',
    );
  });

  it('answers 404 NOT_FOUND for a userId that is not a uuid, as for a user who is no member, changing nothing', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const result = await updateUsers(owner, owner.organizationId, {
      users: [
        { userId: member.id, role: 'admin' },
        { userId: 'u-1', role: 'member' },
      ],
    });
    expectError(result, 404, 'NOT_FOUND');
    expect(result.body.error.message).toContain('u-1');
    const [row] = await db()
      .select({ role: organizationMembers.role })
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, owner.organizationId), eq(organizationMembers.userId, member.id)),
      );
    expect(row!.role).toBe('member');
  });

  it('matches a userId sent in upper case to the member', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    expectData(
      await updateUsers(owner, owner.organizationId, { users: [{ userId: member.id.toUpperCase(), role: 'admin' }] }),
    );
    const [row] = await db()
      .select({ role: organizationMembers.role })
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, owner.organizationId), eq(organizationMembers.userId, member.id)),
      );
    expect(row!.role).toBe('admin');
  });
});

describeSecurity(routes.updateOrganizationUsers, {
  request: async ({ organizationId }) => ({
    path: { orgId: organizationId },
    body: {
      users: [{ userId: (await soleMember(organizationId)).id, name: `Renamed ${randomUUID()}` }],
    },
  }),
  unchanged: async (_organization, request) => {
    const [entry] = (request.body as { users: Array<{ userId: string; name: string }> }).users;
    expect((await account(entry!.userId)).name).not.toBe(entry!.name);
  },
});

describe('PATCH /organization/{orgId}/user security', () => {
  it('answers 403 NOT_A_MEMBER to the owner of another organization, changing nothing', async () => {
    const owner = await createUser();
    const sole = await soleMember(owner.organizationId);
    const stranger = await createUser();
    const before = await snapshot(owner.organizationId, [sole]);
    const result = await updateUsers(stranger, owner.organizationId, {
      users: [{ userId: sole.id, email: uniqueEmail('takeover'), role: 'owner' }],
    });
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect(await snapshot(owner.organizationId, [sole])).toEqual(before);
  });

  it.each([['full_access'], ['employee'], ['billing'], ['member'], ['user'], ['client']] as const)(
    'answers 403 INSUFFICIENT_ROLE to a %s, changing nothing',
    async (role) => {
      const owner = await createUser();
      const caller = await addMember(owner.organizationId, role);
      const sole = await soleMember(owner.organizationId);
      const before = await snapshot(owner.organizationId, [caller, sole]);
      const result = await updateUsers(caller, owner.organizationId, {
        users: [
          { userId: caller.id, role: 'admin' },
          { userId: sole.id, name: 'Not Allowed' },
        ],
      });
      expectError(result, 403, 'INSUFFICIENT_ROLE');
      expect(await snapshot(owner.organizationId, [caller, sole])).toEqual(before);
    },
  );

  it('applies the change for an automation token with members:write', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const membersWriter = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['members:write'] } }),
    );
    const body = { users: [{ userId: member.id, role: 'admin' }] };
    expectData(await updateUsers({ accessToken: membersWriter.token }, owner.organizationId, body));
    expect(await rolesIn(owner.organizationId, [member.id])).toEqual({ [member.id]: 'admin' });
  });
});

describe('PATCH /organization/{orgId}/user: login emails change only safely', () => {
  const LOGIN_EMAIL_CHANGED = 'The login email of your account was changed';

  it("answers 403 FORBIDDEN to an automation token with members:write changing its owner's email, or a member's, changing nothing", async () => {
    // Prepare: the scope escape: the token changes its own owner's address, then forgot/reset hands the account over.
    const owner = await createUser();
    const member = await soleMember(owner.organizationId, 'member');
    const token = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['members:write'] } }),
    ).token as string;
    const before = await snapshot(owner.organizationId, [owner, member]);
    // Act / Assess
    for (const target of [owner, member]) {
      const result = await updateUsers({ accessToken: token }, owner.organizationId, {
        users: [{ userId: target.id, email: uniqueEmail('escape') }],
      });
      expectError(result, 403, 'FORBIDDEN');
    }
    expect(await snapshot(owner.organizationId, [owner, member])).toEqual(before);
    // Roles and names of members ranked below still change with the token.
    expectData(
      await updateUsers({ accessToken: token }, owner.organizationId, {
        users: [{ userId: member.id, role: 'employee', name: 'Renamed By Token' }],
      }),
    );
  });

  it("answers 403 FORBIDDEN to a legacy token changing a member's email, changing nothing", async () => {
    const owner = await createUser();
    const member = await soleMember(owner.organizationId, 'member');
    const legacy = expectData(await invoke(routes.generateToken, { token: owner.accessToken, body: {} }))
      .token as string;
    const before = await snapshot(owner.organizationId, [member]);
    expectError(
      await updateUsers({ accessToken: legacy }, owner.organizationId, {
        users: [{ userId: member.id, email: uniqueEmail('legacy') }],
      }),
      403,
      'FORBIDDEN',
    );
    expect(await snapshot(owner.organizationId, [member])).toEqual(before);
  });

  it("answers 403 INSUFFICIENT_ROLE when an admin changes another admin's email or name, changing nothing", async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const otherAdmin = await soleMember(owner.organizationId, 'admin');
    const member = await soleMember(owner.organizationId, 'member');
    const before = await snapshot(owner.organizationId, [otherAdmin, member]);
    for (const change of [{ email: uniqueEmail('admin-takeover') }, { name: 'Renamed Admin' }]) {
      const result = await updateUsers(admin, owner.organizationId, {
        users: [
          { userId: member.id, role: 'employee' },
          { userId: otherAdmin.id, ...change },
        ],
      });
      expectError(result, 403, 'INSUFFICIENT_ROLE');
    }
    // Nor by making a member an admin in the same request: the higher of the two roles counts.
    expectError(
      await updateUsers(admin, owner.organizationId, {
        users: [{ userId: member.id, role: 'admin', email: uniqueEmail('promoted') }],
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(await snapshot(owner.organizationId, [otherAdmin, member])).toEqual(before);
    // A member ranked below the admin: yes.
    const address = uniqueEmail('below-admin');
    expectData(
      await updateUsers(admin, owner.organizationId, {
        users: [{ userId: member.id, name: 'Renamed Member', email: address }],
      }),
    );
    expect(await account(member.id)).toMatchObject({ name: 'Renamed Member', email: address });
  });

  it("answers 403 INSUFFICIENT_ROLE when anyone changes a super admin's email or name, changing nothing", async () => {
    const owner = await createUser();
    const staff = await soleMember(owner.organizationId, 'member');
    await updateUserRow(staff.id, { isSuperAdmin: true });
    const before = await snapshot(owner.organizationId, [staff]);
    for (const change of [{ email: uniqueEmail('staff') }, { name: 'Renamed Staff' }]) {
      expectError(
        await updateUsers(owner, owner.organizationId, { users: [{ userId: staff.id, ...change }] }),
        403,
        'INSUFFICIENT_ROLE',
      );
    }
    expect(await snapshot(owner.organizationId, [staff])).toEqual(before);
    // Their role in the organization is still the organization's to set.
    expectData(await updateUsers(owner, owner.organizationId, { users: [{ userId: staff.id, role: 'employee' }] }));
  });

  it("lets an owner change an admin's email: every session and token of the admin ends and the old address is told", async () => {
    // Prepare: an admin signed in twice, with an automation token and a legacy token
    const owner = await createUser();
    const admin = await soleMember(owner.organizationId, 'admin');
    const second = expectData(await invoke(routes.login, { body: { email: admin.email, password: admin.password } }));
    const automation = expectData(
      await invoke(routes.generateToken, { token: admin.accessToken, body: { scopes: ['organization:read'] } }),
    ).token as string;
    const legacy = expectData(await invoke(routes.generateToken, { token: admin.accessToken, body: {} }))
      .token as string;
    for (const token of [admin.accessToken, second.accessToken, automation, legacy])
      expectData(await invoke(routes.getOrganization, { token, path: { orgId: owner.organizationId } }));
    const address = uniqueEmail('admin-moved');
    // Act
    expectData(await updateUsers(owner, owner.organizationId, { users: [{ userId: admin.id, email: address }] }));
    // Assess: nothing the admin held works any more
    for (const token of [admin.accessToken, second.accessToken, automation, legacy]) {
      expectError(
        await invoke(routes.getOrganization, { token, path: { orgId: owner.organizationId } }),
        401,
        'UNAUTHENTICATED',
      );
    }
    expect(
      (await invoke(routes.refreshToken, { body: { refreshToken: admin.refreshToken } })).status,
    ).toBeGreaterThanOrEqual(400);
    // The old address is told (once, without the full new address); the new one gets nothing of it.
    const notices = emailsTo(admin.email).filter((m) => m.subject === LOGIN_EMAIL_CHANGED);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).not.toContain(address);
    expect(notices[0]!.text).toContain(address.slice(address.indexOf('@')));
    expect(emailsTo(address).filter((m) => m.subject === LOGIN_EMAIL_CHANGED)).toHaveLength(0);
    // The owner's own session is untouched.
    expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
  });

  it('changes nothing, ends nothing and sends nothing when a later entry is refused', async () => {
    const owner = await createUser();
    const member = await soleMember(owner.organizationId, 'member');
    const otherOwner = await soleMember(owner.organizationId, 'owner');
    const before = await snapshot(owner.organizationId, [member, otherOwner]);
    const result = await updateUsers(owner, owner.organizationId, {
      users: [
        { userId: member.id, email: uniqueEmail('not-applied') },
        { userId: otherOwner.id, email: uniqueEmail('refused') },
      ],
    });
    expectError(result, 403, 'INSUFFICIENT_ROLE');
    expect(await snapshot(owner.organizationId, [member, otherOwner])).toEqual(before);
    expectData(await invoke(routes.getProfile, { token: member.accessToken }));
    expect(emailsTo(member.email).filter((m) => m.subject === LOGIN_EMAIL_CHANGED)).toHaveLength(0);
  });
});
