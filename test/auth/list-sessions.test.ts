import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { createUser, signIn } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { mintAutomationToken, mintLegacyToken } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

/** GET /auth/sessions (extension): the caller's sign-in sessions and legacy tokens; ending one: end-session.test.ts. */

const T0 = new Date('2026-11-22T10:00:00.000Z');

const listSessions = (token: string) => invoke(routes.listSessions, { token });

describe('GET /auth/sessions', () => {
  it('lists sign-in sessions and legacy tokens newest first, with user agent and ip of creation, and the current flag', async () => {
    // Prepare: register (a session), a second sign-in from a phone, a legacy token, an automation token
    testClock.freeze(T0);
    const user = await createUser();
    testClock.advance(60);
    const phone = await signIn(user, { ip: '198.51.100.7', userAgent: 'PhoneApp/2.1 (iOS 19)' });
    testClock.advance(60);
    const legacy = expectData(
      await invoke(routes.generateToken, {
        token: phone.accessToken,
        body: {},
        ip: '198.51.100.8',
        headers: { 'user-agent': 'curl/8.9' },
      }),
    ).token as string;
    await mintAutomationToken(user, ['profile:read']);
    expectData(await invoke(routes.getProfile, { token: legacy }));
    // Act
    const data = expectData(await listSessions(phone.accessToken));
    // Assess: three entries (the automation token is listed at GET /auth/tokens, not here), newest first
    expect(data.map((s: { kind: string }) => s.kind)).toEqual(['legacy', 'sign_in', 'sign_in']);
    const [legacyEntry, phoneEntry, registerEntry] = data;
    expect(legacyEntry).toEqual({
      id: expect.any(String),
      kind: 'legacy',
      createdAt: new Date(T0.getTime() + 120_000).toISOString(),
      lastUsedAt: new Date(T0.getTime() + 120_000).toISOString(),
      expiresAt: expect.any(String),
      userAgent: 'curl/8.9',
      ip: '198.51.100.8',
      current: false,
    });
    expect(phoneEntry).toMatchObject({
      kind: 'sign_in',
      userAgent: 'PhoneApp/2.1 (iOS 19)',
      ip: '198.51.100.7',
      current: true,
    });
    expect(phoneEntry.createdAt).toBe(new Date(T0.getTime() + 60_000).toISOString());
    // createUser registers from an address of its own (test/harness/invoke.ts, the enumeration limit).
    expect(registerEntry).toMatchObject({
      kind: 'sign_in',
      userAgent: 'vitest',
      ip: expect.stringMatching(/^198\.1[89]\.\d+\.\d+$/),
      current: false,
    });
    // The legacy token sees itself as current
    const fromLegacy = expectData(await listSessions(legacy));
    expect(fromLegacy.filter((s: { current: boolean }) => s.current).map((s: { id: string }) => s.id)).toEqual([
      legacyEntry.id,
    ]);
  });

  it('never shows a token value, nor any other user sessions', async () => {
    const user = await createUser();
    const other = await createUser();
    const legacy = await mintLegacyToken(user);
    await mintLegacyToken(other);
    const result = await listSessions(user.accessToken);
    const text = JSON.stringify(result.body);
    for (const secret of [user.accessToken, user.refreshToken, legacy, other.accessToken, other.refreshToken])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/cebs_(rt|lt|at)_/);
    expect(text).not.toMatch(/tokenHash|token_hash/);
    expect(expectData(result)).toHaveLength(2);
  });

  it('stamps lastUsedAt of a sign-in session when its refresh token is used', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    expect(expectData(await listSessions(user.accessToken))[0].lastUsedAt).toBeNull();
    testClock.advance(600);
    expectData(await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }));
    expect(expectData(await listSessions(user.accessToken))[0].lastUsedAt).toBe(
      new Date(T0.getTime() + 600_000).toISOString(),
    );
  });
});

describeSecurity(routes.listSessions, { request: () => ({}), everyToken: true });
