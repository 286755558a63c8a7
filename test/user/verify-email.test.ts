import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { emailTokens, users } from '../../lib/db/schema';
import {
  createUser,
  emailsTo,
  tokenFromEmail,
  type TestUser,
  uniqueEmail,
  updateUserRow,
  userRow,
} from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const T0 = new Date('2026-11-22T10:00:00.000Z');
const TWO_DAYS = 2 * 86_400;

const verifyEmail = (body: unknown, extra: { token?: string } = {}) => invoke(routes.verifyEmail, { body, ...extra });

const verificationTokenOf = (user: TestUser) => tokenFromEmail(user.email, 'Verify');

const verifyTokenRows = (userId: string) =>
  db()
    .select()
    .from(emailTokens)
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, 'verify_email')));

describe('POST /user/verify-email', () => {
  it('verifies the address with the token of the registration email', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const mail = emailsTo(user.email).find((m) => m.subject.includes('Verify'));
    expect(mail?.text).toContain(`email=${encodeURIComponent(user.email)}`);
    const token = verificationTokenOf(user);
    testClock.advance(3600);
    // Act
    const result = await verifyEmail({ token, email: user.email });
    // Assess: the answer
    const data = expectData(result);
    expect(Object.keys(data)).toEqual(['message']);
    expect(data.message).toEqual(expect.any(String));
    expect(data.message.length).toBeGreaterThan(0);
    // ...what was stored: verified, with the time, and the token used up
    const row = await userRow(user.id);
    expect(row.isEmailVerified).toBe(true);
    expect(row.emailVerifiedAt?.toISOString()).toBe(new Date(T0.getTime() + 3600_000).toISOString());
    expect(await verifyTokenRows(user.id)).toEqual([]);
  });

  it('shows the verified address in the profile, even right after a cached read', async () => {
    // Prepare: warm the profile cache with the unverified state
    const user = await createUser();
    expect(expectData(await invoke(routes.getProfile, { token: user.accessToken })).isEmailVerified).toBe(false);
    // Act
    expectData(await verifyEmail({ token: verificationTokenOf(user) }));
    // Assess
    expect(expectData(await invoke(routes.getProfile, { token: user.accessToken })).isEmailVerified).toBe(true);
    expect(
      expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } })).userProfile
        .isEmailVerified,
    ).toBe(true);
  });

  it('needs no email: the token alone is enough', async () => {
    const user = await createUser();
    expectData(await verifyEmail({ token: verificationTokenOf(user) }));
    expect((await userRow(user.id)).isEmailVerified).toBe(true);
  });

  it('compares the email case-insensitively', async () => {
    const user = await createUser();
    expectData(await verifyEmail({ token: verificationTokenOf(user), email: user.email.toUpperCase() }));
    expect((await userRow(user.id)).isEmailVerified).toBe(true);
  });

  it('needs no authentication, and ignores a bearer token of someone else', async () => {
    const user = await createUser();
    const stranger = await createUser();
    expectData(await verifyEmail({ token: verificationTokenOf(user) }, { token: stranger.accessToken }));
    expect((await userRow(user.id)).isEmailVerified).toBe(true);
    expect((await userRow(stranger.id)).isEmailVerified).toBe(false);
  });

  it('is still valid one second before the two days run out', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    testClock.advance(TWO_DAYS - 1);
    expectData(await verifyEmail({ token: verificationTokenOf(user) }));
    expect((await userRow(user.id)).isEmailVerified).toBe(true);
  });

  it.each([
    ['exactly two days', TWO_DAYS],
    ['two days and a second', TWO_DAYS + 1],
    ['a month', 30 * 86_400],
  ])('answers 400 TOKEN_EXPIRED %s after issue and leaves the address unverified', async (_label, seconds) => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const token = verificationTokenOf(user);
    testClock.advance(seconds);
    // Act
    const result = await verifyEmail({ token, email: user.email });
    // Assess
    expectError(result, 400, 'TOKEN_EXPIRED');
    const row = await userRow(user.id);
    expect(row.isEmailVerified).toBe(false);
    expect(row.emailVerifiedAt).toBeNull();
  });

  it('answers 404 for an expired token sent with a mismatched email (nothing about the token leaks)', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const token = verificationTokenOf(user);
    testClock.advance(TWO_DAYS + 1);
    expectError(await verifyEmail({ token, email: uniqueEmail('other') }), 404, 'NOT_FOUND');
  });

  it('answers 404 when a used token is sent again', async () => {
    // Prepare
    const user = await createUser();
    const token = verificationTokenOf(user);
    expectData(await verifyEmail({ token, email: user.email }));
    // Act
    const result = await verifyEmail({ token, email: user.email });
    // Assess
    expectError(result, 404, 'NOT_FOUND');
    expect((await userRow(user.id)).isEmailVerified).toBe(true);
  });

  it.each([
    ['an unknown token', async () => ({ token: `cebs_ev_${'x'.repeat(43)}` })],
    ['a token of random text', async () => ({ token: 'definitely-not-a-token' })],
    [
      'a token with a different email',
      async (u: TestUser) => ({ token: verificationTokenOf(u), email: uniqueEmail('mismatch') }),
    ],
    [
      "a token with another user's email",
      async (u: TestUser) => ({ token: verificationTokenOf(u), email: (await createUser()).email }),
    ],
    [
      'the token with a character changed',
      async (u: TestUser) => ({
        token: `${verificationTokenOf(u).slice(0, -1)}${verificationTokenOf(u).endsWith('A') ? 'B' : 'A'}`,
      }),
    ],
    ['the token with extra characters', async (u: TestUser) => ({ token: `${verificationTokenOf(u)}x` })],
    ['the access token instead of the emailed one', async (u: TestUser) => ({ token: u.accessToken })],
    ['the refresh token instead of the emailed one', async (u: TestUser) => ({ token: u.refreshToken })],
    [
      'a password-reset token instead of the verification one',
      async (u: TestUser) => {
        expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: u.email } }));
        return { token: tokenFromEmail(u.email, 'Reset'), email: u.email };
      },
    ],
  ])(
    'answers 404 NOT_FOUND for %s and verifies nobody',
    async (_label, bodyOf: (u: TestUser) => Promise<{ token: string; email?: string }>) => {
      // Prepare
      const user = await createUser();
      const body = await bodyOf(user);
      // Act
      const result = await verifyEmail(body);
      // Assess
      expectError(result, 404, 'NOT_FOUND');
      expect((await userRow(user.id)).isEmailVerified).toBe(false);
      if (body.email) {
        const [owner] = await db().select().from(users).where(eq(users.email, body.email.toLowerCase()));
        if (owner) expect(owner.isEmailVerified).toBe(false);
      }
      // The real token still works afterwards: a failed attempt does not burn it.
      expectData(await verifyEmail({ token: verificationTokenOf(user) }));
    },
  );

  it("a mismatched email does not burn the token: the owner's email then verifies", async () => {
    const user = await createUser();
    const token = verificationTokenOf(user);
    expectError(await verifyEmail({ token, email: uniqueEmail('wrong') }), 404, 'NOT_FOUND');
    expectData(await verifyEmail({ token, email: user.email }));
    expect((await userRow(user.id)).isEmailVerified).toBe(true);
  });

  it("verifies only the token's owner", async () => {
    const alice = await createUser();
    const bob = await createUser();
    expectData(await verifyEmail({ token: verificationTokenOf(alice), email: alice.email }));
    expect((await userRow(alice.id)).isEmailVerified).toBe(true);
    expect((await userRow(bob.id)).isEmailVerified).toBe(false);
    expect(await verifyTokenRows(bob.id)).toHaveLength(1);
  });

  it('does not verify an address changed after the link was sent: the old link is 404, a resent one verifies', async () => {
    // Prepare: the account's email changes (as PATCH /organization/{orgId}/user does: new address, unverified)
    const user = await createUser();
    const oldLink = verificationTokenOf(user);
    const newEmail = uniqueEmail('changed');
    await updateUserRow(user.id, { email: newEmail, isEmailVerified: false, emailVerifiedAt: null });
    // Act
    const result = await verifyEmail({ token: oldLink });
    // Assess
    expectError(result, 404, 'NOT_FOUND');
    expect(await userRow(user.id)).toMatchObject({ email: newEmail, isEmailVerified: false });
    // A link sent to the new address does verify it
    expectData(await invoke(routes.resendVerificationEmail, { token: user.accessToken }));
    expectData(await verifyEmail({ token: tokenFromEmail(newEmail, 'Verify'), email: newEmail }));
    expect(await userRow(user.id)).toMatchObject({ email: newEmail, isEmailVerified: true });
  });

  it.each([
    ['an empty body', {}, ['body.token']],
    ['only an email', { email: 'someone@example.com' }, ['body.token']],
    ['an empty token', { token: '' }, ['body.token']],
    ['a numeric token', { token: 12345 }, ['body.token']],
    ['a null token', { token: null }, ['body.token']],
    ['a 513-character token', { token: 't'.repeat(513) }, ['body.token']],
    ['an email that is not one', { token: 'cebs_ev_abc', email: 'not-an-email' }, ['body.email']],
    ['an oversized email', { token: 'cebs_ev_abc', email: `${'a'.repeat(250)}@example.com` }, ['body.email']],
    ['a numeric email', { token: 'cebs_ev_abc', email: 42 }, ['body.email']],
    ['several bad fields at once', { token: '', email: 'nope' }, ['body.token', 'body.email']],
  ])('answers 400 VALIDATION_FAILED naming the field for %s', async (_label, body, fields) => {
    expectError(await verifyEmail(body), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 400 VALIDATION_FAILED for a request without a body', async () => {
    expectError(await invoke(routes.verifyEmail, {}), 400, 'VALIDATION_FAILED', ['body']);
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    expectError(await invoke(routes.verifyEmail, { rawBody: '{"token":' }), 400, 'MALFORMED_JSON');
  });

  it('ignores fields it does not know: isEmailVerified and userId with a wrong token verify nothing (404)', async () => {
    const user = await createUser();
    const body = { token: `${verificationTokenOf(user)}x`, isEmailVerified: true, userId: user.id };
    expectError(await verifyEmail(body), 404, 'NOT_FOUND');
    expect((await userRow(user.id)).isEmailVerified).toBe(false);
  });
});

describeSecurity(routes.verifyEmail, {
  request: ({ user }) => ({ body: { token: verificationTokenOf(user), email: user.email } }),
});
