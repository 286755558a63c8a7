import { describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/auth/login';
import { routes } from '../../functions/routes';
import { eq } from 'drizzle-orm';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { signInAddresses } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import { createUser, updateUserRow, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke, invokeHandler } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

describe('POST /auth/login', () => {
  it('signs in and returns tokens with the profile and its organizations', async () => {
    // Prepare
    const user = await createUser({ organizationName: 'Login Happy LLP' });
    // Act
    const result = await invokeHandler(login, { body: { email: user.email.toUpperCase(), password: user.password } });
    // Assess
    const data = expectData(result);
    expect(data.accessToken).toMatch(/^ey/);
    expect(data.refreshToken).toMatch(/^cebs_rt_/);
    expect(data.userProfile).toMatchObject({ id: user.id, email: user.email, isEmailVerified: false });
    expect(data.userProfile.organizations).toEqual([
      expect.objectContaining({
        organization: expect.objectContaining({ id: user.organizationId, name: 'Login Happy LLP', activePlan: null }),
        permission: { role: 'owner' },
        billing: expect.objectContaining({ billingMode: 'free', delinquent: false }),
      }),
    ]);
    const profile = await invoke(routes.getProfile, { token: data.accessToken });
    expect(expectData(profile).id).toBe(user.id);
    // Signing in is activity, not a profile change: updatedAt stays.
    const before = await invoke(routes.login, { body: { email: user.email, password: user.password } });
    expect(expectData(before).userProfile.updatedAt).toBe(data.userProfile.updatedAt);
  });

  it.each([
    ['a wrong password', (u: { email: string }) => ({ email: u.email, password: 'not-the-password' })],
    ['an unknown email', () => ({ email: uniqueEmail('nobody'), password: 'whatever-it-is' })],
  ])('answers 401 for %s', async (_label, credentials) => {
    const user = await createUser();
    expectError(await invoke(routes.login, { body: credentials(user) }), 401, 'INVALID_CREDENTIALS');
  });

  it.each([
    ['an inactive account', { isActive: false }],
    ['an extraction-only user', { accountKind: 'extraction_only' }],
  ])('answers 401 for %s', async (_label, change) => {
    const user = await createUser();
    await updateUserRow(user.id, change);
    expectError(
      await invoke(routes.login, { body: { email: user.email, password: user.password } }),
      401,
      'ACCOUNT_INACTIVE',
    );
  });

  it.each([
    [{}, ['body.email', 'body.password']],
    [{ email: 'not-an-email', password: 'x' }, ['body.email']],
    [{ email: 'a@example.com', password: 12345678 }, ['body.password']],
    [{ email: 'a@example.com', password: 'x'.repeat(129) }, ['body.password']],
  ])('answers 400 naming the bad field for %j', async (body, fields) => {
    expectError(await invoke(routes.login, { body }), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 400 for a body that is not JSON', async () => {
    expectError(await invoke(routes.login, { rawBody: '{"email":' }), 400, 'MALFORMED_JSON');
  });
});

describe('POST /auth/login: failed sign-ins are throttled', () => {
  /** Two minutes into a 15-minute window, so a test never straddles a window boundary by accident. */
  const T0 = new Date('2026-11-22T10:02:00.000Z');
  const attempt = (email: string, password: string, ip: string) =>
    invoke(routes.login, { body: { email, password }, ip });

  it('answers the 11th failed sign-in for one account from one IP 429 RATE_LIMITED with Retry-After, even with the right password', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const ip = '192.0.2.11';
    for (let i = 0; i < 10; i += 1)
      expectError(await attempt(user.email, `wrong-${i}-password`, ip), 401, 'INVALID_CREDENTIALS');
    // Act
    const limited = await attempt(user.email, 'wrong-again-password', ip);
    // Assess: refused until the end of the 15-minute window (10:15)
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe(String(13 * 60));
    expectError(await attempt(user.email, user.password, ip), 429, 'RATE_LIMITED');
    // ...the same account from another IP, and another account from this IP, are fine
    expectData(await attempt(user.email, user.password, '192.0.2.12'));
    const other = await createUser();
    expectData(await attempt(other.email, other.password, ip));
    // ...and after Retry-After seconds the account signs in again from this IP
    testClock.advance(Number(limited.headers['retry-after']));
    expectData(await attempt(user.email, user.password, ip));
  });

  it('counts an unknown address like a known one', async () => {
    testClock.freeze(T0);
    const email = uniqueEmail('nobody');
    for (let i = 0; i < 10; i += 1)
      expectError(await attempt(email, 'wrong-password', '192.0.2.21'), 401, 'INVALID_CREDENTIALS');
    expectError(await attempt(email, 'wrong-password', '192.0.2.21'), 429, 'RATE_LIMITED');
  });

  it('resets the account and IP count on a successful sign-in', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const ip = '192.0.2.31';
    for (let i = 0; i < 9; i += 1)
      expectError(await attempt(user.email, 'wrong-password', ip), 401, 'INVALID_CREDENTIALS');
    expectData(await attempt(user.email, user.password, ip));
    for (let i = 0; i < 10; i += 1)
      expectError(await attempt(user.email, 'wrong-password', ip), 401, 'INVALID_CREDENTIALS');
    expectError(await attempt(user.email, 'wrong-password', ip), 429, 'RATE_LIMITED');
  });

  it('answers the 101st failed sign-in from one IP across accounts 429; another IP is unaffected', async () => {
    // Prepare: 100 failures spread over 20 addresses (5 each, under the per-account limit)
    testClock.freeze(T0);
    const ip = '192.0.2.41';
    const user = await createUser();
    const addresses = Array.from({ length: 20 }, () => uniqueEmail('spray'));
    for (const email of addresses) {
      for (let i = 0; i < 5; i += 1) expectError(await attempt(email, 'Winter2026!', ip), 401, 'INVALID_CREDENTIALS');
    }
    // Act
    const limited = await attempt(uniqueEmail('spray'), 'Winter2026!', ip);
    // Assess
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBe(13 * 60);
    expectError(await attempt(user.email, user.password, ip), 429, 'RATE_LIMITED');
    expectData(await attempt(user.email, user.password, '192.0.2.42'));
    expectError(await attempt(addresses[0]!, 'Winter2026!', '192.0.2.42'), 401, 'INVALID_CREDENTIALS');
    // A new window lets the IP in again
    testClock.advance(13 * 60);
    expectData(await attempt(user.email, user.password, ip));
  });
});

describe('POST /auth/login: limits per account across addresses, per /64, and known addresses', () => {
  const T0 = new Date('2026-11-22T10:02:00.000Z');
  const attempt = (email: string, password: string, ip: string) =>
    invoke(routes.login, { body: { email, password }, ip });
  /** Failures of one account spread over addresses, each under the per-address limit. */
  const failFrom = async (email: string, count: number, ipOf: (i: number) => string) => {
    for (let i = 0; i < count; i += 1)
      expectError(await attempt(email, `wrong-${i}-password`, ipOf(i)), 401, 'INVALID_CREDENTIALS');
  };

  it('refuses an account after 20 failures in 15 minutes from anywhere, then longer (an hour, a day) as failures go on; a known address still signs in', async () => {
    // Prepare: the owner signed in from the office before
    testClock.freeze(T0);
    const user = await createUser();
    const office = '192.0.2.100';
    expectData(await attempt(user.email, user.password, office));
    await failFrom(user.email, 20, (i) => `198.51.100.${10 + (i % 4)}`);
    // Act: a new address, the right password
    const limited = await attempt(user.email, user.password, '198.51.100.20');
    // Assess: until the 15-minute window ends (10:15)
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe(String(13 * 60));
    expectData(await attempt(user.email, user.password, office));
    // 20 more in the next quarter: 40 in the hour, refused until the hour ends (11:00)
    testClock.advance(13 * 60);
    await failFrom(user.email, 20, (i) => `198.51.100.${30 + (i % 4)}`);
    const longer = await attempt(user.email, user.password, '198.51.100.21');
    expectError(longer, 429, 'RATE_LIMITED');
    expect(longer.headers['retry-after']).toBe(String(45 * 60));
    expectData(await attempt(user.email, user.password, office));
  });

  it('counts the addresses of one IPv6 /64 as one client', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    await failFrom(user.email, 10, (i) => `2001:db8:40:1::${(i + 1).toString(16)}`);
    expectError(await attempt(user.email, user.password, '2001:db8:40:1:ffff::7'), 429, 'RATE_LIMITED');
    expectData(await attempt(user.email, user.password, '2001:db8:40:2::1'));
  });

  it("does not lock out, behind one NAT, an account that signed in there before, however many of others' failures", async () => {
    testClock.freeze(T0);
    const nat = '192.0.2.150';
    const regular = await createUser();
    expectData(await attempt(regular.email, regular.password, nat));
    const newcomer = await createUser();
    // 100 failures from the NAT over 20 other addresses (5 each)
    for (let a = 0; a < 20; a += 1) await failFrom(uniqueEmail('spray'), 5, () => nat);
    expectError(await attempt(uniqueEmail('spray'), 'Winter2026!', nat), 429, 'RATE_LIMITED');
    // The account that signed in from the NAT before still does; one that never did waits.
    expectData(await attempt(regular.email, regular.password, nat));
    expectError(await attempt(newcomer.email, newcomer.password, nat), 429, 'RATE_LIMITED');
  });

  it('forgets an address 90 days after the last sign-in from it (maintenance prunes it)', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const home = '192.0.2.170';
    expectData(await attempt(user.email, user.password, home));
    testClock.advance(91 * 86_400);
    await failFrom(user.email, 20, (i) => `198.51.100.${50 + (i % 4)}`);
    // No longer known: held by the account's limit like any other address.
    expectError(await attempt(user.email, user.password, home), 429, 'RATE_LIMITED');
    await runMaintenance();
    const rows = await db().select().from(signInAddresses).where(eq(signInAddresses.userId, user.id));
    expect(rows.map((r) => r.addressGroup)).not.toContain(home);
  });

  it('records the address group of each successful sign-in, not of a failure', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    expectData(await attempt(user.email, user.password, '2001:db8:41:1::5'));
    expectError(await attempt(user.email, 'wrong-password', '192.0.2.160'), 401, 'INVALID_CREDENTIALS');
    const rows = await db().select().from(signInAddresses).where(eq(signInAddresses.userId, user.id));
    expect(rows.map((r) => r.addressGroup)).toContain('2001:db8:41:1::/64');
    expect(rows.map((r) => r.addressGroup)).not.toContain('192.0.2.160');
    expect(rows.find((r) => r.addressGroup === '2001:db8:41:1::/64')!.lastSignedInAt).toEqual(T0);
    // A request without a source address makes no address known.
    expectData(await attempt(user.email, user.password, 'unknown'));
    const after = await db().select().from(signInAddresses).where(eq(signInAddresses.userId, user.id));
    expect(after.map((r) => r.addressGroup)).not.toContain('unknown');
  });
});

describeSecurity(routes.login, { request: ({ user }) => ({ body: { email: user.email, password: user.password } }) });
