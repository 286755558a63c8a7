import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { sessions } from '../../lib/db/schema';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeResult } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const T0 = new Date('2026-11-22T10:00:00.000Z');

let restoreConfig: (() => void) | undefined;
afterEach(() => {
  restoreConfig?.();
  restoreConfig = undefined;
});

interface Minted {
  token: string;
  id: string;
}

async function mint(user: TestUser, scopes: string[] = ['profile:read'], label?: string): Promise<Minted> {
  return expectData<Minted>(await invoke(routes.generateToken, { token: user.accessToken, body: { scopes, label } }));
}

const revoke = (token: string | undefined, id: string) => invoke(routes.revokeToken, { token, path: { id } });

/** 204 with no body at all (no envelope). */
function expectNoContent(result: InvokeResult): void {
  expect(result.status, JSON.stringify(result.body)).toBe(204);
  expect(result.body).toBeUndefined();
}

const listOf = async (user: TestUser) =>
  expectData<Array<{ id: string; revoked: boolean; scopes: string[] }>>(
    await invoke(routes.listTokens, { token: user.accessToken }),
  );

const rowOf = async (id: string) => (await db().select().from(sessions).where(eq(sessions.id, id)))[0];

describe('DELETE /auth/tokens/{id}', () => {
  it('revokes the token: 204 with no body, revoked in the list, 401 on use', async () => {
    // Prepare
    const user = await createUser();
    const minted = await mint(user, ['profile:read'], 'to revoke');
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    // Act
    const result = await revoke(user.accessToken, minted.id);
    // Assess
    expectNoContent(result);
    expect(await listOf(user)).toEqual([
      expect.objectContaining({ id: minted.id, revoked: true, scopes: ['profile:read'] }),
    ]);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('keeps the row (marks it, does not delete it) and records the revocation time', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user);
    testClock.advance(30);
    expectNoContent(await revoke(user.accessToken, minted.id));
    const row = await rowOf(minted.id);
    expect(row).toBeDefined();
    expect(row!.revokedAt?.toISOString()).toBe(new Date(T0.getTime() + 30_000).toISOString());
  });

  it('answers 204 when revoking twice and keeps the first revocation time', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user);
    expectNoContent(await revoke(user.accessToken, minted.id));
    // Act
    testClock.advance(600);
    const second = await revoke(user.accessToken, minted.id);
    // Assess
    expectNoContent(second);
    expect((await rowOf(minted.id))!.revokedAt?.toISOString()).toBe(T0.toISOString());
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('revokes only the token named, not the caller’s other tokens or session', async () => {
    const user = await createUser();
    const revoked = await mint(user, ['profile:read'], 'gone');
    const kept = await mint(user, ['profile:read'], 'kept');
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expectNoContent(await revoke(user.accessToken, revoked.id));
    expectData(await invoke(routes.getProfile, { token: kept.token }));
    expectData(await invoke(routes.getProfile, { token: legacy.token }));
    expectData(await invoke(routes.getProfile, { token: user.accessToken }));
    expect((await listOf(user)).map((e) => [e.id, e.revoked])).toEqual([
      [kept.id, false],
      [revoked.id, true],
    ]);
  });

  it('revokes a disabled token (empty scopes) and an expired one', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const disabled = await mint(user);
    expectData(
      await invoke(routes.updateTokenScopes, {
        token: user.accessToken,
        path: { id: disabled.id },
        body: { scopes: [] },
      }),
    );
    const expiring = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'], ttlDays: 1 } }),
    );
    testClock.advance(2 * 86_400);
    const { accessToken } = expectData(
      await invoke(routes.login, { body: { email: user.email, password: user.password } }),
    );
    expectNoContent(await revoke(accessToken, disabled.id));
    expectNoContent(await revoke(accessToken, expiring.id));
    const entries = expectData(await invoke(routes.listTokens, { token: accessToken }));
    expect(entries.every((e: { revoked: boolean }) => e.revoked)).toBe(true);
    expect(entries).toHaveLength(2);
  });

  it('works while automation tokens are off', async () => {
    // Prepare
    const user = await createUser();
    const minted = await mint(user);
    restoreConfig = overrideConfig({ FEATURE_AUTOMATION_TOKENS: false });
    // Act
    const result = await revoke(user.accessToken, minted.id);
    // Assess
    expectNoContent(result);
    expect(await listOf(user)).toEqual([expect.objectContaining({ id: minted.id, revoked: true })]);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('can be called with a legacy token of the same user', async () => {
    const user = await createUser();
    const minted = await mint(user);
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expectNoContent(await revoke(legacy.token, minted.id));
    expect((await listOf(user))[0]!.revoked).toBe(true);
  });

  it('answers 404 for another user’s token id and leaves it working', async () => {
    // Prepare
    const alice = await createUser();
    const mallory = await createUser();
    const alicesToken = await mint(alice);
    // Act
    const result = await revoke(mallory.accessToken, alicesToken.id);
    // Assess
    expectError(result, 404, 'NOT_FOUND');
    expect((await listOf(alice))[0]!.revoked).toBe(false);
    expectData(await invoke(routes.getProfile, { token: alicesToken.token }));
  });

  it('answers 404 for an unknown uuid', async () => {
    const user = await createUser();
    expectError(await revoke(user.accessToken, randomUUID()), 404, 'NOT_FOUND');
    expectError(await revoke(user.accessToken, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
  });

  it.each(['login', 'legacy'] as const)(
    'answers 404 for the id of the caller’s own %s session, which stays valid',
    async (kind) => {
      // Prepare
      const user = await createUser();
      const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
      const [row] = await db()
        .select({ id: sessions.id, revokedAt: sessions.revokedAt })
        .from(sessions)
        .where(and(eq(sessions.userId, user.id), eq(sessions.kind, kind)));
      // Act
      const result = await revoke(user.accessToken, row!.id);
      // Assess
      expectError(result, 404, 'NOT_FOUND');
      expect((await rowOf(row!.id))!.revokedAt).toBeNull();
      expectData(await invoke(routes.getProfile, { token: kind === 'login' ? user.accessToken : legacy.token }));
    },
  );

  it.each(['not-a-uuid', 'abc', '123', 'ffffffff-ffff-ffff-ffff', `${randomUUID()}x`])(
    'answers 404 (an unknown id, never 400) for %s',
    async (id) => {
      const user = await createUser();
      expectError(await revoke(user.accessToken, id), 404, 'NOT_FOUND');
    },
  );

  it.each([
    ['over 200 characters', 'i'.repeat(201)],
    ['with a NUL character', 'ab\u0000c'],
  ])('answers 400 naming path.id for an id %s', async (_label, id) => {
    const user = await createUser();
    expectError(await revoke(user.accessToken, id), 400, 'VALIDATION_FAILED', ['path.id']);
  });
});

describeSecurity(routes.revokeToken, {
  request: async ({ user }) => ({ path: { id: (await mint(user)).id } }),
  unchanged: async ({ user }, request) =>
    expect((await listOf(user)).find((e) => e.id === request.path!.id)!.revoked).toBe(false),
  everyToken: true,
});

describe('DELETE /auth/tokens/{id} security', () => {
  it('answers 401 before validating the path for an anonymous caller', async () => {
    expectError(await revoke(undefined, 'not-a-uuid'), 401, 'UNAUTHENTICATED');
  });

  it('answers 403 INSUFFICIENT_SCOPE to an automation token, even revoking itself', async () => {
    const user = await createUser();
    const minted = await mint(user, ['profile:read', 'profile:write']);
    const other = await mint(user);
    expectError(await revoke(minted.token, minted.id), 403, 'INSUFFICIENT_SCOPE');
    expectError(await revoke(minted.token, other.id), 403, 'INSUFFICIENT_SCOPE');
    expect((await listOf(user)).map((e) => e.revoked)).toEqual([false, false]);
  });
});
