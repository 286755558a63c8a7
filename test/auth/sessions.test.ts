import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { openLoginSession } from '../../lib/auth/sessions';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { createUser, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { mintAutomationToken, mintLegacyToken } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

/** GET /auth/sessions and DELETE /auth/sessions/{id} (extension): the caller's sign-in sessions and legacy tokens. */

const T0 = new Date('2026-11-22T10:00:00.000Z');

const listSessions = (token: string) => invoke(routes.listSessions, { token });
const endSession = (token: string, id: string) => invoke(routes.endSession, { token, path: { id } });

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

describe('DELETE /auth/sessions/{id}', () => {
  it('ends another sign-in session (access and refresh token) with 204 and no body', async () => {
    const user = await createUser();
    const other = await signIn(user);
    const otherId = expectData(await listSessions(other.accessToken)).find((s: { current: boolean }) => s.current).id;
    const result = await endSession(user.accessToken, otherId);
    expect(result.status).toBe(204);
    expect(result.body).toBeUndefined();
    expectError(await invoke(routes.getProfile, { token: other.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.refreshToken, { body: { refreshToken: other.refreshToken } }), 404, 'NOT_FOUND');
    expect(expectData(await listSessions(user.accessToken)).map((s: { id: string }) => s.id)).not.toContain(otherId);
    // Ending it again: it is gone
    expectError(await endSession(user.accessToken, otherId), 404, 'NOT_FOUND');
  });

  it('ends a legacy token', async () => {
    const user = await createUser();
    const legacy = await mintLegacyToken(user);
    const id = expectData(await listSessions(user.accessToken)).find((s: { kind: string }) => s.kind === 'legacy').id;
    expect((await endSession(user.accessToken, id)).status).toBe(204);
    expectError(await invoke(routes.getProfile, { token: legacy }), 401, 'UNAUTHENTICATED');
  });

  it('ends the current session too (like logout)', async () => {
    const user = await createUser();
    const id = expectData(await listSessions(user.accessToken))[0].id;
    expect((await endSession(user.accessToken, id)).status).toBe(204);
    expectError(await listSessions(user.accessToken), 401, 'UNAUTHENTICATED');
  });

  it("answers 404 for another user's session, and leaves it working", async () => {
    const user = await createUser();
    const other = await createUser();
    const otherId = expectData(await listSessions(other.accessToken))[0].id;
    expectError(await endSession(user.accessToken, otherId), 404, 'NOT_FOUND');
    expectData(await invoke(routes.getProfile, { token: other.accessToken }));
  });

  it("answers 404 for the id of the caller's automation token (revoked at DELETE /auth/tokens/{id})", async () => {
    const user = await createUser();
    const minted = await mintAutomationToken(user, ['profile:read']);
    expectError(await endSession(user.accessToken, minted.id), 404, 'NOT_FOUND');
    expectData(await invoke(routes.getProfile, { token: minted.token }));
  });

  it.each([
    ['a random uuid', randomUUID()],
    ['a string that is no uuid', 'not-a-uuid'],
    ['200 characters', 'x'.repeat(200)],
    ['unicode', 'séssion-🔑'],
  ])('answers 404 NOT_FOUND (never 400) for %s', async (_label, id) => {
    const user = await createUser();
    expectError(await endSession(user.accessToken, id), 404, 'NOT_FOUND');
  });

  it('answers 400 naming path.id for an id over 200 characters', async () => {
    const user = await createUser();
    expectError(await endSession(user.accessToken, 'x'.repeat(201)), 400, 'VALIDATION_FAILED', ['path.id']);
  });
});

describeSecurity(routes.listSessions, { request: () => ({}), everyToken: true });

describeSecurity(routes.endSession, {
  // Each request ends a second sign-in session of the user (made directly: the account may be inactive), so the let-through ones answer 204.
  request: async ({ user }) => {
    const second = await openLoginSession(db(), user.id, null);
    return { path: { id: second.sessionId } };
  },
  everyToken: true,
});
