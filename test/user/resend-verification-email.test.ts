import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { emailTokens, users } from '../../lib/db/schema';
import { createUser, emailsTo, tokenFromEmail, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { type Auth, uniqueIp } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

/** 15 seconds into a one-minute window, so a test never straddles a window boundary by accident. */
const T0 = new Date('2026-11-22T10:00:15.000Z');
const TWO_DAYS_MS = 2 * 86_400_000;

/** Every call from its own client IP unless told, so per-IP windows of different tests never mix. */
const resend = (auth: Auth, ip = uniqueIp()) => invoke(routes.resendVerificationEmail, { ...auth, ip });

const verificationMails = (user: TestUser) => emailsTo(user.email).filter((m) => m.subject.includes('Verify'));

const verifyTokenRows = (userId: string) =>
  db()
    .select()
    .from(emailTokens)
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, 'verify_email')));

const isVerified = async (id: string) => (await db().select().from(users).where(eq(users.id, id)))[0]!.isEmailVerified;

describe('POST /user/resend-verification-email', () => {
  it('sends a new verification link to the caller, valid two days from now', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    expect(verificationMails(user)).toHaveLength(1);
    testClock.advance(30);
    // Act
    const result = await resend({ token: user.accessToken });
    // Assess: the answer
    const data = expectData(result);
    expect(Object.keys(data)).toEqual(['message']);
    expect(data.message).toContain(user.email);
    // ...the email
    const mails = verificationMails(user);
    expect(mails).toHaveLength(2);
    expect(mails[1]!.to).toBe(user.email);
    expect(mails[1]!.text).toContain(user.name);
    // ...one stored token, valid two days from the resend
    const rows = await verifyTokenRows(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.expiresAt.toISOString()).toBe(new Date(T0.getTime() + 30_000 + TWO_DAYS_MS).toISOString());
  });

  it('invalidates the earlier token: the old link is 404, the new one verifies', async () => {
    // Prepare
    const user = await createUser();
    const first = tokenFromEmail(user.email, 'Verify');
    // Act
    expectData(await resend({ token: user.accessToken }));
    // Assess
    const second = tokenFromEmail(user.email, 'Verify');
    expect(second).not.toBe(first);
    expectError(await invoke(routes.verifyEmail, { body: { token: first, email: user.email } }), 404, 'NOT_FOUND');
    expect(await isVerified(user.id)).toBe(false);
    expectData(await invoke(routes.verifyEmail, { body: { token: second, email: user.email } }));
    expect(await isVerified(user.id)).toBe(true);
  });

  it('restarts the two days: a resent link works after the first one would have expired', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    testClock.advance(86_400);
    const { accessToken } = expectData(
      await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }),
    );
    expectData(await resend({ token: accessToken }));
    testClock.advance(86_400 + 60);
    expectData(await invoke(routes.verifyEmail, { body: { token: tokenFromEmail(user.email, 'Verify') } }));
    expect(await isVerified(user.id)).toBe(true);
  });

  it('touches only the caller: another user keeps their token', async () => {
    const alice = await createUser();
    const bob = await createUser();
    const bobToken = tokenFromEmail(bob.email, 'Verify');
    expectData(await resend({ token: alice.accessToken }));
    expect(verificationMails(bob)).toHaveLength(1);
    expectData(await invoke(routes.verifyEmail, { body: { token: bobToken, email: bob.email } }));
  });

  it('answers 400 EMAIL_ALREADY_VERIFIED once the address is verified, and sends nothing', async () => {
    // Prepare
    const user = await createUser();
    expectData(await invoke(routes.verifyEmail, { body: { token: tokenFromEmail(user.email, 'Verify') } }));
    // Act
    const result = await resend({ token: user.accessToken });
    // Assess
    expectError(result, 400, 'EMAIL_ALREADY_VERIFIED');
    expect(verificationMails(user)).toHaveLength(1);
    expect(await verifyTokenRows(user.id)).toEqual([]);
  });

  describe('limit: 3 requests per minute', () => {
    it('answers the 4th request within a minute 429 RATE_LIMITED with Retry-After, and allows it again after the window', async () => {
      // Prepare
      testClock.freeze(T0);
      const user = await createUser();
      const ip = uniqueIp();
      for (let i = 0; i < 3; i += 1) {
        expectData(await resend({ token: user.accessToken }, ip));
        testClock.advance(5);
      }
      // Act: 10:00:30, the 4th request of the window
      const limited = await resend({ token: user.accessToken }, ip);
      // Assess: refused, told how long to wait (to the end of the window), and nothing sent
      expectError(limited, 429, 'RATE_LIMITED');
      expect(limited.headers['retry-after']).toBe('30');
      expect(verificationMails(user)).toHaveLength(1 + 3);
      // Still refused later in the same window, with a shorter wait
      testClock.advance(25);
      const stillLimited = await resend({ token: user.accessToken }, ip);
      expectError(stillLimited, 429, 'RATE_LIMITED');
      expect(stillLimited.headers['retry-after']).toBe('5');
      // The window passes (Retry-After seconds later): allowed again, and the link it sends works
      testClock.advance(Number(stillLimited.headers['retry-after']));
      expectData(await resend({ token: user.accessToken }, ip));
      expect(verificationMails(user)).toHaveLength(1 + 4);
      expectData(await invoke(routes.verifyEmail, { body: { token: tokenFromEmail(user.email, 'Verify') } }));
    });

    it('counts per user: a 4th request from another IP is refused too', async () => {
      testClock.freeze(T0);
      const user = await createUser();
      for (let i = 0; i < 3; i += 1) expectData(await resend({ token: user.accessToken }, uniqueIp()));
      const result = await resend({ token: user.accessToken }, uniqueIp());
      expectError(result, 429, 'RATE_LIMITED');
      expect(Number(result.headers['retry-after'])).toBe(45);
    });

    it('counts per user across sessions: a second sign-in shares the limit', async () => {
      testClock.freeze(T0);
      const user = await createUser();
      const second = expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
      for (let i = 0; i < 3; i += 1) expectData(await resend({ token: user.accessToken }));
      expectError(await resend({ token: second.accessToken }), 429, 'RATE_LIMITED');
    });

    it("counts per user only: two users behind one IP (a firm's office) each get their own 3 per minute", async () => {
      testClock.freeze(T0);
      const ip = uniqueIp();
      const alice = await createUser();
      const bob = await createUser();
      for (let i = 0; i < 3; i += 1) expectData(await resend({ token: alice.accessToken }, ip));
      for (let i = 0; i < 3; i += 1) expectData(await resend({ token: bob.accessToken }, ip));
      const latecomer = await createUser();
      expectData(await resend({ token: latecomer.accessToken }, ip));
      expectError(await resend({ token: alice.accessToken }, ip), 429, 'RATE_LIMITED');
      expectError(await resend({ token: bob.accessToken }, ip), 429, 'RATE_LIMITED');
    });

    it('counts already-verified refusals too (the limit is checked before the handler)', async () => {
      testClock.freeze(T0);
      const user = await createUser();
      expectData(await invoke(routes.verifyEmail, { body: { token: tokenFromEmail(user.email, 'Verify') } }));
      const ip = uniqueIp();
      for (let i = 0; i < 3; i += 1)
        expectError(await resend({ token: user.accessToken }, ip), 400, 'EMAIL_ALREADY_VERIFIED');
      expectError(await resend({ token: user.accessToken }, ip), 429, 'RATE_LIMITED');
    });

    it('does not count requests refused for authentication', async () => {
      testClock.freeze(T0);
      const user = await createUser();
      const ip = uniqueIp();
      for (let i = 0; i < 5; i += 1) expectError(await resend({ token: 'not-a-token' }, ip), 401, 'UNAUTHENTICATED');
      expectData(await resend({ token: user.accessToken }, ip));
    });
  });
});

const mailsBefore = new Map<string, number>();
describeSecurity(routes.resendVerificationEmail, {
  request: ({ user }) => {
    mailsBefore.set(user.id, verificationMails(user).length);
    return {};
  },
  // Only a let-through request sends a link.
  after: ({ user }, _request, result) =>
    expect(verificationMails(user).length).toBe(mailsBefore.get(user.id)! + (result.status === 200 ? 1 : 0)),
  everyToken: true,
});
