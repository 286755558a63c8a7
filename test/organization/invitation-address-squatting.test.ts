import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { invitations, organizationMembers, organizations, sessions } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import {
  addMember,
  createUser,
  emailsTo,
  type TestUser,
  tokenFromEmail,
  uniqueEmail,
  userRow,
} from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

/**
 * Issue 12 (4) and (6): an address belongs to whoever proves the mailbox, and re-inviting a
 * pending address never lowers its role nor invalidates the link already emailed.
 */

const INVITED = 'You are invited to join';

const invite = (caller: { accessToken: string }, orgId: string, body: unknown) =>
  invoke(routes.inviteUsers, { token: caller.accessToken, path: { orgId }, body });

const accept = (orgId: string, body: Record<string, unknown>) =>
  invoke(routes.acceptInvitation, { path: { orgId }, body });

const membership = (orgId: string, userId: string) =>
  db()
    .select()
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, orgId), eq(organizationMembers.userId, userId)));

const invitationOf = async (orgId: string, email: string) =>
  (
    await db()
      .select()
      .from(invitations)
      .where(and(eq(invitations.organizationId, orgId), eq(invitations.email, email)))
  )[0]!;

const autoAccepting = async (owner: TestUser) => {
  await db()
    .update(organizations)
    .set({ autoAcceptInvitations: true })
    .where(eq(organizations.id, owner.organizationId));
};

/** Someone who registered the partner's address without owning the mailbox, with a legacy and an automation token. */
async function squatter() {
  const email = uniqueEmail('partner').replace('@example.com', '@lawfirm.test');
  const user = await createUser({ email, name: 'Not The Partner', password: 'squatter-password' });
  const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} })).token as string;
  const automation = expectData(
    await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['cases:read'] } }),
  ).token as string;
  expect((await userRow(user.id)).isEmailVerified).toBe(false);
  return { ...user, legacy, automation };
}

/** Verifies a registered user's address with the token of their registration email. */
const verify = async (user: TestUser) =>
  expectData(
    await invoke(routes.verifyEmail, {
      body: { token: tokenFromEmail(user.email, 'Verify your email address'), email: user.email },
    }),
  );

describe('address squatting: an unverified account is never attached without proof of the mailbox', () => {
  it("sends an auto-accepting organization's invitation instead of attaching an unverified account", async () => {
    // Prepare
    const owner = await createUser();
    await autoAccepting(owner);
    const squat = await squatter();
    // Act
    const result = await invite(owner, owner.organizationId, { emails: [squat.email], role: 'employee' });
    // Assess
    expect(expectData(result, 201).message).toBe('1 invitation(s) sent');
    expect(await membership(owner.organizationId, squat.id)).toHaveLength(0);
    expect(await invitationOf(owner.organizationId, squat.email)).toMatchObject({
      status: 'pending',
      role: 'employee',
      invitedUserId: squat.id,
    });
    expect(emailsTo(squat.email).filter((m) => m.subject.startsWith(INVITED))).toHaveLength(1);
    expect(emailsTo(squat.email).filter((m) => m.subject.startsWith('You were added'))).toHaveLength(0);
    const mine = expectData(await invoke(routes.listMyOrganizations, { token: squat.legacy }));
    expect(mine.data.map((o: any) => o.organization.id)).not.toContain(owner.organizationId);
  });

  it('still adds a verified account at once with auto-accept', async () => {
    const owner = await createUser();
    await autoAccepting(owner);
    const colleague = await createUser();
    await verify(colleague);
    expect(expectData(await invite(owner, owner.organizationId, { emails: [colleague.email] }), 201).message).toBe(
      '0 invitation(s) sent, 1 existing user(s) added',
    );
    expect(await membership(owner.organizationId, colleague.id)).toHaveLength(1);
  });

  it('hands the unverified account to whoever accepts the emailed link, ending every earlier credential', async () => {
    // Prepare: the squatter holds a sign-in session, a legacy token and an automation token
    const owner = await createUser();
    await autoAccepting(owner);
    const squat = await squatter();
    expectData(
      await invoke(routes.updateProfile, {
        token: squat.legacy,
        body: { phoneNumbers: ['+1 555 0100'], userType: 'attorney' },
      }),
    );
    expectData(await invite(owner, owner.organizationId, { emails: [squat.email], role: 'employee' }), 201);
    const token = tokenFromEmail(squat.email, INVITED);
    // Act: the real partner follows the link from the mailbox
    const result = await accept(owner.organizationId, {
      token,
      email: squat.email,
      name: 'Real Partner',
      password: 'the-partners-password',
    });
    // Assess: signed in like a new account, on the same account row, now verified
    const data = expectData(result, 201);
    expect(data.permission).toEqual({ role: 'employee' });
    expect(data.login.accessToken).toMatch(/^ey/);
    expect(data.login.refreshToken).toMatch(/^cebs_rt_/);
    expect(data.login.userProfile).toMatchObject({
      id: squat.id,
      email: squat.email,
      name: 'Real Partner',
      isEmailVerified: true,
    });
    const row = await userRow(squat.id);
    expect(row).toMatchObject({
      name: 'Real Partner',
      isEmailVerified: true,
      phoneNumbers: [],
      userType: null,
      termsAcceptedAt: null,
    });
    expect(row.emailVerifiedAt).toBeInstanceOf(Date);
    expect(await membership(owner.organizationId, squat.id)).toEqual([expect.objectContaining({ role: 'employee' })]);
    expect(await invitationOf(owner.organizationId, squat.email)).toMatchObject({
      status: 'accepted',
      acceptedById: squat.id,
    });
    // ...every credential of the squatter is gone
    expectError(await invoke(routes.getProfile, { token: squat.legacy }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.getProfile, { token: squat.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.getProfile, { token: squat.automation }), 401, 'UNAUTHENTICATED');
    expect((await invoke(routes.refreshToken, { body: { refreshToken: squat.refreshToken } })).status).not.toBe(200);
    expectError(
      await invoke(routes.login, { body: { email: squat.email, password: 'squatter-password' } }),
      401,
      'INVALID_CREDENTIALS',
    );
    const live = await db().select().from(sessions).where(eq(sessions.userId, squat.id));
    expect(live.filter((s) => s.kind !== 'automation').map((s) => s.tokenHash)).toEqual([
      hashToken(data.login.refreshToken),
    ]);
    expect(live.filter((s) => s.kind === 'automation').every((s) => s.revokedAt !== null)).toBe(true);
    // ...and the partner's new credentials work
    expect(expectData(await invoke(routes.getProfile, { token: data.login.accessToken })).id).toBe(squat.id);
    expectData(await invoke(routes.login, { body: { email: squat.email, password: 'the-partners-password' } }));
  });

  it('takes over through the link of an organization without auto-accept too', async () => {
    const owner = await createUser();
    const squat = await squatter();
    expectData(await invite(owner, owner.organizationId, { emails: [squat.email] }), 201);
    const token = tokenFromEmail(squat.email, INVITED);
    const data = expectData(
      await accept(owner.organizationId, {
        token,
        email: squat.email,
        name: 'Real Partner',
        password: 'the-partners-password',
      }),
      201,
    );
    expect(data.login).not.toBeNull();
    expectError(await invoke(routes.getProfile, { token: squat.legacy }), 401, 'UNAUTHENTICATED');
  });

  it.each([
    ['name', { password: 'the-partners-password' }],
    ['password', { name: 'Real Partner' }],
    ['name and password', {}],
  ])(
    'answers 400 INVITEE_DETAILS_REQUIRED when the acceptor of an unverified account omits %s, changing nothing',
    async (_label, details) => {
      const owner = await createUser();
      const squat = await squatter();
      expectData(await invite(owner, owner.organizationId, { emails: [squat.email] }), 201);
      const token = tokenFromEmail(squat.email, INVITED);
      const before = await userRow(squat.id);
      expectError(
        await accept(owner.organizationId, { token, email: squat.email, ...details }),
        400,
        'INVITEE_DETAILS_REQUIRED',
      );
      expect(await membership(owner.organizationId, squat.id)).toHaveLength(0);
      expect(await invitationOf(owner.organizationId, squat.email)).toMatchObject({ status: 'pending' });
      expect(await userRow(squat.id)).toMatchObject({
        name: before.name,
        passwordHash: before.passwordHash,
        isEmailVerified: false,
      });
      expectData(await invoke(routes.getProfile, { token: squat.legacy }));
    },
  );

  it("keeps today's behaviour for a verified account: joins, login null, password and sessions untouched", async () => {
    const owner = await createUser();
    const colleague = await createUser();
    await verify(colleague);
    expectData(await invite(owner, owner.organizationId, { emails: [colleague.email], role: 'client' }), 201);
    const token = tokenFromEmail(colleague.email, INVITED);
    const data = expectData(
      await accept(owner.organizationId, {
        token,
        email: colleague.email,
        name: 'Ignored',
        password: 'ignored-password',
      }),
      201,
    );
    expect(data.login).toBeNull();
    expect(await membership(owner.organizationId, colleague.id)).toEqual([expect.objectContaining({ role: 'client' })]);
    expectData(await invoke(routes.getProfile, { token: colleague.accessToken }));
    expectData(await invoke(routes.login, { body: { email: colleague.email, password: colleague.password } }));
    expect((await userRow(colleague.id)).name).toBe(colleague.name);
  });
});

describe('re-inviting a pending address', () => {
  it('lets a plain member neither lower a pending admin invitation nor invalidate its emailed link', async () => {
    // Prepare
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const invitee = uniqueEmail('admin-to-be');
    expectData(await invite(owner, owner.organizationId, { emails: [invitee], role: 'admin' }), 201);
    const original = tokenFromEmail(invitee, INVITED);
    const before = await invitationOf(owner.organizationId, invitee);
    // Act
    expectData(await invite(member, owner.organizationId, { emails: [invitee], role: 'member' }), 201);
    // Assess
    const after = await invitationOf(owner.organizationId, invitee);
    expect(after).toMatchObject({
      id: before.id,
      role: 'admin',
      status: 'pending',
      tokenHash: before.tokenHash,
      invitedById: owner.id,
    });
    expect(after.expiresAt.toISOString()).toBe(before.expiresAt.toISOString());
    // The re-sent email is a reminder without a new link: the newest link is still the original one.
    expect(emailsTo(invitee)).toHaveLength(2);
    expect(emailsTo(invitee)[1]!.text).not.toContain('token=');
    expect(tokenFromEmail(invitee, INVITED)).toBe(original);
    const data = expectData(
      await accept(owner.organizationId, {
        token: original,
        email: invitee,
        name: 'New Admin',
        password: 'a-long-password',
      }),
      201,
    );
    expect(data.permission).toEqual({ role: 'admin' });
  });

  it('raises the role of a pending invitation when the re-inviter grants a higher one, keeping the link', async () => {
    const owner = await createUser();
    const invitee = uniqueEmail('promoted');
    expectData(await invite(owner, owner.organizationId, { emails: [invitee], role: 'client' }), 201);
    const original = tokenFromEmail(invitee, INVITED);
    expectData(await invite(owner, owner.organizationId, { emails: [invitee], role: 'employee' }), 201);
    expect(await invitationOf(owner.organizationId, invitee)).toMatchObject({
      role: 'employee',
      tokenHash: hashToken(original),
    });
    const data = expectData(
      await accept(owner.organizationId, {
        token: original,
        email: invitee,
        name: 'Promoted',
        password: 'a-long-password',
      }),
      201,
    );
    expect(data.permission).toEqual({ role: 'employee' });
  });

  it("adds a verified user with the pending invitation's higher role when auto-accept is on", async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const colleague = await createUser();
    await verify(colleague);
    expectData(await invite(owner, owner.organizationId, { emails: [colleague.email], role: 'admin' }), 201);
    await autoAccepting(owner);
    expectData(await invite(member, owner.organizationId, { emails: [colleague.email], role: 'client' }), 201);
    expect(await membership(owner.organizationId, colleague.id)).toEqual([expect.objectContaining({ role: 'admin' })]);
  });
});
