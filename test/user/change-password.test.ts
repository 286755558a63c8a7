import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { sessions, users } from '../../lib/db/schema';
import { verifyPassword } from '../../lib/secrets';
import { createUser, emailsTo, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { signIn } from '../harness/actors';
import { mintAutomationToken, mintLegacyToken } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

const T0 = new Date('2026-11-22T10:00:00.000Z');
const NEW_PASSWORD = 'brand-new-password-2026';

const changePassword = (token: string | undefined, body: unknown) => invoke(routes.changePassword, { token, body });

const login = (email: string, password: string) => invoke(routes.login, { body: { email, password } });

const refresh = (refreshToken: string) => invoke(routes.refreshToken, { body: { refreshToken } });

const passwordHashOf = async (id: string) =>
  (await db().select({ hash: users.passwordHash }).from(users).where(eq(users.id, id)))[0]!.hash;

const loginSessionCount = async (id: string) =>
  (
    await db()
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.userId, id), eq(sessions.kind, 'login')))
  ).length;

const passwordChangedMails = (user: TestUser) =>
  emailsTo(user.email).filter((m) => m.subject === 'Your password was changed');

describe('POST /user/change-password', () => {
  it('changes the password and returns the freshly built profile', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser({ name: 'Changing Person', organizationName: 'Change Password LLP' });
    const hashBefore = await passwordHashOf(user.id);
    testClock.advance(10);
    // Act
    const result = await changePassword(user.accessToken, { oldPassword: user.password, newPassword: NEW_PASSWORD });
    // Assess
    const profile = expectData(result);
    expect(profile).toMatchObject({ id: user.id, email: user.email, name: 'Changing Person', isEmailVerified: false });
    expect(profile).not.toHaveProperty('password');
    expect(profile).not.toHaveProperty('passwordHash');
    expect(profile.organizations).toEqual([
      expect.objectContaining({
        organization: expect.objectContaining({ id: user.organizationId, name: 'Change Password LLP' }),
        permission: { role: 'owner' },
      }),
    ]);
    const hashAfter = await passwordHashOf(user.id);
    expect(hashAfter).not.toBe(hashBefore);
    expect(hashAfter).not.toContain(NEW_PASSWORD);
  });

  it('old password no longer signs in, the new one does', async () => {
    // Prepare
    const user = await createUser();
    // Act
    expectData(await changePassword(user.accessToken, { oldPassword: user.password, newPassword: NEW_PASSWORD }));
    // Assess
    expectError(await login(user.email, user.password), 401, 'INVALID_CREDENTIALS');
    const signedIn = expectData(await login(user.email, NEW_PASSWORD));
    expect(signedIn.userProfile.id).toBe(user.id);
  });

  it('ends the other sign-in sessions but keeps the current one working', async () => {
    // Prepare: a second sign-in (another device) beside the current one
    const user = await createUser();
    const other = await signIn(user);
    expectData(await invoke(routes.getProfile, { token: other.accessToken }));
    expect(await loginSessionCount(user.id)).toBe(2);
    // Act
    expectData(await changePassword(user.accessToken, { oldPassword: user.password, newPassword: NEW_PASSWORD }));
    // Assess: the other session is gone, access and refresh token alike
    expectError(await invoke(routes.getProfile, { token: other.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(await refresh(other.refreshToken), 404, 'NOT_FOUND');
    // ...the current one keeps working, and can still be refreshed
    expect(expectData(await invoke(routes.getProfile, { token: user.accessToken })).id).toBe(user.id);
    const refreshed = expectData(await refresh(user.refreshToken));
    expectData(await invoke(routes.getProfile, { token: refreshed.accessToken }));
    expect(await loginSessionCount(user.id)).toBe(1);
  });

  it('ends every legacy token, keeps scoped automation tokens (listed and revocable at /auth/tokens)', async () => {
    // Prepare
    const user = await createUser();
    const automation = await mintAutomationToken(user, ['profile:read']);
    const legacy = await mintLegacyToken(user);
    const secondLegacy = await mintLegacyToken(user);
    expectData(await invoke(routes.getProfile, { token: legacy }));
    // Act
    expectData(await changePassword(user.accessToken, { oldPassword: user.password, newPassword: NEW_PASSWORD }));
    // Assess: the legacy tokens are gone, the scoped automation token works and is listed unrevoked
    expectError(await invoke(routes.getProfile, { token: legacy }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.getProfile, { token: secondLegacy }), 401, 'UNAUTHENTICATED');
    expectData(await invoke(routes.getProfile, { token: automation.token }));
    const listed = expectData(await invoke(routes.listTokens, { token: user.accessToken }));
    expect(listed).toEqual([expect.objectContaining({ id: automation.id, revoked: false })]);
    const remaining = expectData(await invoke(routes.listSessions, { token: user.accessToken }));
    expect(remaining).toEqual([expect.objectContaining({ kind: 'sign_in', current: true })]);
  });

  it('through a legacy token ends every sign-in session and every other legacy token, the calling token itself keeps working', async () => {
    const user = await createUser();
    const legacy = await mintLegacyToken(user);
    const otherLegacy = await mintLegacyToken(user);
    expectData(await changePassword(legacy, { oldPassword: user.password, newPassword: NEW_PASSWORD }));
    expectError(await invoke(routes.getProfile, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.getProfile, { token: otherLegacy }), 401, 'UNAUTHENTICATED');
    expect(await loginSessionCount(user.id)).toBe(0);
    expectData(await invoke(routes.getProfile, { token: legacy }));
  });

  it("sends a 'Your password was changed' email that carries no password", async () => {
    const user = await createUser();
    expect(passwordChangedMails(user)).toHaveLength(0);
    expectData(await changePassword(user.accessToken, { oldPassword: user.password, newPassword: NEW_PASSWORD }));
    const mails = passwordChangedMails(user);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toBe(user.email);
    expect(mails[0]!.text).toContain(user.name);
    expect(mails[0]!.text).not.toContain(NEW_PASSWORD);
    expect(mails[0]!.html).not.toContain(NEW_PASSWORD);
    expect(mails[0]!.text).not.toContain(user.password);
  });

  it('can be changed again with the new password as the old one', async () => {
    const user = await createUser();
    expectData(await changePassword(user.accessToken, { oldPassword: user.password, newPassword: NEW_PASSWORD }));
    expectError(
      await changePassword(user.accessToken, { oldPassword: user.password, newPassword: 'third-password-x' }),
      400,
      'WRONG_PASSWORD',
    );
    expectData(await changePassword(user.accessToken, { oldPassword: NEW_PASSWORD, newPassword: 'third-password-x' }));
    expectData(await login(user.email, 'third-password-x'));
    expect(passwordChangedMails(user)).toHaveLength(2);
  });

  it.each([
    ['8 characters', 'p'.repeat(8)],
    ['128 characters', 'p'.repeat(128)],
    ['spaces and unicode', '  pässwörd 🔑  '],
  ])('accepts a new password of %s, exactly as typed', async (_label, newPassword) => {
    const user = await createUser();
    expectData(await changePassword(user.accessToken, { oldPassword: user.password, newPassword }));
    expectData(await login(user.email, newPassword));
  });

  it.each([
    ['a wrong old password', (u: TestUser) => `${u.password}-wrong`],
    ['the old password in another case', (u: TestUser) => u.password.toUpperCase()],
    ['the old password with a trailing space', (u: TestUser) => `${u.password} `],
  ])('answers 400 WRONG_PASSWORD for %s and changes nothing', async (_label, oldPasswordOf) => {
    // Prepare
    const user = await createUser();
    const other = await signIn(user);
    const hashBefore = await passwordHashOf(user.id);
    // Act
    const result = await changePassword(user.accessToken, {
      oldPassword: oldPasswordOf(user),
      newPassword: NEW_PASSWORD,
    });
    // Assess
    expectError(result, 400, 'WRONG_PASSWORD');
    expect(await passwordHashOf(user.id)).toBe(hashBefore);
    expectData(await login(user.email, user.password));
    expectError(await login(user.email, NEW_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectData(await invoke(routes.getProfile, { token: other.accessToken }));
    expect(passwordChangedMails(user)).toHaveLength(0);
  });

  it('checks the old password of the caller, not of another account', async () => {
    const alice = await createUser();
    const bob = await createUser();
    expectError(
      await changePassword(alice.accessToken, { oldPassword: bob.password, newPassword: NEW_PASSWORD }),
      400,
      'WRONG_PASSWORD',
    );
    expectData(await login(bob.email, bob.password));
    expectData(await login(alice.email, alice.password));
  });

  it.each([
    ['an empty body', {}, ['body.oldPassword', 'body.newPassword']],
    ['a missing old password', { newPassword: NEW_PASSWORD }, ['body.oldPassword']],
    ['a missing new password', { oldPassword: 'whatever-old' }, ['body.newPassword']],
    ['an empty old password', { oldPassword: '', newPassword: NEW_PASSWORD }, ['body.oldPassword']],
    ['a numeric old password', { oldPassword: 12345678, newPassword: NEW_PASSWORD }, ['body.oldPassword']],
    ['a 129-character old password', { oldPassword: 'o'.repeat(129), newPassword: NEW_PASSWORD }, ['body.oldPassword']],
    ['a 7-character new password', { oldPassword: 'whatever-old', newPassword: 'p'.repeat(7) }, ['body.newPassword']],
    [
      'a 129-character new password',
      { oldPassword: 'whatever-old', newPassword: 'p'.repeat(129) },
      ['body.newPassword'],
    ],
    ['a null new password', { oldPassword: 'whatever-old', newPassword: null }, ['body.newPassword']],
    [
      'a new password as an array',
      { oldPassword: 'whatever-old', newPassword: ['brand-new-password'] },
      ['body.newPassword'],
    ],
  ])('answers 400 VALIDATION_FAILED naming the field for %s', async (_label, body, fields) => {
    const user = await createUser();
    const hashBefore = await passwordHashOf(user.id);
    expectError(await changePassword(user.accessToken, body), 400, 'VALIDATION_FAILED', fields);
    expect(await passwordHashOf(user.id)).toBe(hashBefore);
  });

  it('validates the body even when the old password is right', async () => {
    const user = await createUser();
    const result = await changePassword(user.accessToken, { oldPassword: user.password, newPassword: 'short' });
    expectError(result, 400, 'VALIDATION_FAILED', ['body.newPassword']);
    expectData(await login(user.email, user.password));
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const user = await createUser();
    expectError(
      await invoke(routes.changePassword, { token: user.accessToken, rawBody: '{"oldPassword":' }),
      400,
      'MALFORMED_JSON',
    );
  });

  it('answers 401 before validating: an anonymous caller learns nothing about the input', async () => {
    expectError(await changePassword(undefined, { oldPassword: '', unknown: 1 }), 401, 'UNAUTHENTICATED');
  });
});

describeSecurity(routes.changePassword, {
  request: ({ user }) => ({ body: { oldPassword: user.password, newPassword: NEW_PASSWORD } }),
  // A refused request must leave the old password in place; a let-through one must replace it.
  after: async ({ user }, _request, result) =>
    expect(await verifyPassword(user.password, await passwordHashOf(user.id))).toBe(result.status !== 200),
  everyToken: true,
});
