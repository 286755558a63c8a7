import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { SCOPES } from '../../lib/auth/scopes';
import { addDays, testClock } from '../../lib/clock';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { sessions } from '../../lib/db/schema';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
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

async function mint(
  user: TestUser,
  scopes: string[] = ['profile:read'],
  extra: { label?: string; ttlDays?: number } = {},
): Promise<Minted> {
  return expectData<Minted>(
    await invoke(routes.generateToken, { token: user.accessToken, body: { scopes, ...extra } }),
  );
}

const update = (token: string | undefined, id: string, body: unknown) =>
  invoke(routes.updateTokenScopes, { token, path: { id }, body });

const listOf = async (user: TestUser) =>
  expectData<Array<{ id: string; label: string | null; scopes: string[]; revoked: boolean }>>(
    await invoke(routes.listTokens, { token: user.accessToken }),
  );

describe('PATCH /auth/tokens/{id}/scopes', () => {
  it('replaces the scopes, removing duplicates, and returns the updated entry', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user, ['profile:read', 'cases:read'], { label: 'sync', ttlDays: 45 });
    testClock.advance(60);
    // Act
    const result = await update(user.accessToken, minted.id, {
      scopes: ['billing:read', 'profile:write', 'billing:read', 'profile:write'],
    });
    // Assess
    expect(expectData(result)).toEqual({
      id: minted.id,
      label: 'sync',
      scopes: ['billing:read', 'profile:write'],
      lastUsedAt: null,
      expiresAt: addDays(T0, 45).toISOString(),
      revoked: false,
      createdAt: T0.toISOString(),
    });
    expect(JSON.stringify(result.body)).not.toContain(minted.token);
    expect(await listOf(user)).toEqual([
      expect.objectContaining({ id: minted.id, scopes: ['billing:read', 'profile:write'] }),
    ]);
  });

  it('does not change the expiry, label or token value', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user, ['profile:read'], { label: 'stable', ttlDays: 10 });
    const [before] = await db().select().from(sessions).where(eq(sessions.id, minted.id));
    expectData(await update(user.accessToken, minted.id, { scopes: ['cases:read'] }));
    const [after] = await db().select().from(sessions).where(eq(sessions.id, minted.id));
    expect(after).toMatchObject({
      tokenHash: before!.tokenHash,
      label: 'stable',
      expiresAt: before!.expiresAt,
      scopes: ['cases:read'],
    });
  });

  it('applies the new powers at once', async () => {
    // Prepare: a read-only token
    const user = await createUser();
    const minted = await mint(user, ['profile:read']);
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    expectError(
      await invoke(routes.updateProfile, { token: minted.token, body: { name: 'Before' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    // Act: swap read for write
    expectData(await update(user.accessToken, minted.id, { scopes: ['profile:write'] }));
    // Assess
    expect(
      expectData(await invoke(routes.updateProfile, { token: minted.token, body: { name: 'Written By Token' } })).name,
    ).toBe('Written By Token');
    expectError(await invoke(routes.getProfile, { token: minted.token }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('disables the token with an empty list without deleting it, and re-enables it with scopes', async () => {
    // Prepare
    const user = await createUser();
    const minted = await mint(user, ['profile:read'], { label: 'toggle' });
    // Act: disable
    const disabled = expectData(await update(user.accessToken, minted.id, { scopes: [] }));
    // Assess
    expect(disabled).toMatchObject({ id: minted.id, scopes: [], revoked: false, label: 'toggle' });
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
    expectError(
      await invoke(routes.updateProfile, { token: minted.token, body: { name: 'Nope' } }),
      401,
      'UNAUTHENTICATED',
    );
    expect(await listOf(user)).toEqual([expect.objectContaining({ id: minted.id, scopes: [], revoked: false })]);
    // Act: re-enable
    const enabled = expectData(await update(user.accessToken, minted.id, { scopes: ['profile:read'] }));
    // Assess
    expect(enabled.scopes).toEqual(['profile:read']);
    expect(expectData(await invoke(routes.getProfile, { token: minted.token })).id).toBe(user.id);
  });

  it('keeps a disabled token disabled however often it is tried', async () => {
    const user = await createUser();
    const minted = await mint(user);
    expectData(await update(user.accessToken, minted.id, { scopes: [] }));
    for (let i = 0; i < 3; i += 1)
      expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
    expect(await listOf(user)).toEqual([expect.objectContaining({ id: minted.id, scopes: [], revoked: false })]);
  });

  it('accepts every supported scope', async () => {
    const user = await createUser();
    const minted = await mint(user);
    expect(expectData(await update(user.accessToken, minted.id, { scopes: [...SCOPES, ...SCOPES] })).scopes).toEqual([
      ...SCOPES,
    ]);
  });

  it('can be called with a legacy token of the same user', async () => {
    const user = await createUser();
    const minted = await mint(user);
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expect(expectData(await update(legacy.token, minted.id, { scopes: ['cases:read'] })).scopes).toEqual([
      'cases:read',
    ]);
  });

  it('changes an expired token’s scopes without making it usable again', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user, ['profile:read'], { ttlDays: 1 });
    testClock.advance(86_400);
    const { accessToken } = expectData(
      await invoke(routes.login, { body: { email: user.email, password: user.password } }),
    );
    expect(expectData(await update(accessToken, minted.id, { scopes: ['cases:read', 'profile:read'] })).scopes).toEqual(
      ['cases:read', 'profile:read'],
    );
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('answers 403 FEATURE_DISABLED while automation tokens are off and leaves the scopes alone', async () => {
    // Prepare
    const user = await createUser();
    const minted = await mint(user, ['profile:read']);
    restoreConfig = overrideConfig({ FEATURE_AUTOMATION_TOKENS: false });
    // Act
    const result = await update(user.accessToken, minted.id, { scopes: ['billing:write'] });
    // Assess
    expectError(result, 403, 'FEATURE_DISABLED');
    expect((await listOf(user))[0]!.scopes).toEqual(['profile:read']);
    expectError(
      await invoke(routes.updateProfile, { token: minted.token, body: { name: 'x' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  it('answers 403 FEATURE_DISABLED while off, also for disabling with an empty list', async () => {
    const user = await createUser();
    const minted = await mint(user, ['profile:read']);
    restoreConfig = overrideConfig({ FEATURE_AUTOMATION_TOKENS: false });
    expectError(await update(user.accessToken, minted.id, { scopes: [] }), 403, 'FEATURE_DISABLED');
    expectData(await invoke(routes.getProfile, { token: minted.token }));
  });

  it('answers 400 TOKEN_REVOKED for a revoked token and leaves it revoked and unchanged', async () => {
    // Prepare
    const user = await createUser();
    const minted = await mint(user, ['profile:read']);
    expect((await invoke(routes.revokeToken, { token: user.accessToken, path: { id: minted.id } })).status).toBe(204);
    // Act
    const result = await update(user.accessToken, minted.id, { scopes: ['profile:read', 'profile:write'] });
    // Assess
    expectError(result, 400, 'TOKEN_REVOKED');
    expect(await listOf(user)).toEqual([
      expect.objectContaining({ id: minted.id, scopes: ['profile:read'], revoked: true }),
    ]);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('answers 404 for another user’s token and leaves it unchanged', async () => {
    // Prepare
    const alice = await createUser();
    const mallory = await createUser();
    const alicesToken = await mint(alice, ['profile:read']);
    // Act
    const result = await update(mallory.accessToken, alicesToken.id, { scopes: [] });
    // Assess
    expectError(result, 404, 'NOT_FOUND');
    expect((await listOf(alice))[0]!.scopes).toEqual(['profile:read']);
    expectData(await invoke(routes.getProfile, { token: alicesToken.token }));
  });

  it('answers 404 for an unknown uuid', async () => {
    const user = await createUser();
    expectError(await update(user.accessToken, randomUUID(), { scopes: ['profile:read'] }), 404, 'NOT_FOUND');
  });

  it('answers 404 for the id of the caller’s legacy token, which gains no scopes', async () => {
    const user = await createUser();
    expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    const [legacyRow] = await db()
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.userId, user.id), eq(sessions.kind, 'legacy')));
    expectError(await update(user.accessToken, legacyRow!.id, { scopes: ['profile:read'] }), 404, 'NOT_FOUND');
    const [after] = await db().select().from(sessions).where(eq(sessions.id, legacyRow!.id));
    expect(after!.scopes).toBeNull();
  });

  it.each([
    [{ scopes: ['admin:all'] }, ['body.scopes.0']],
    [{ scopes: ['profile:read', 'root'] }, ['body.scopes.1']],
    [{ scopes: [42] }, ['body.scopes.0']],
    [{ scopes: 'profile:read' }, ['body.scopes']],
    [{ scopes: null }, ['body.scopes']],
    [{}, ['body.scopes']],
  ])('answers 400 VALIDATION_FAILED for %j naming %j and leaves the scopes alone', async (body, fields) => {
    const user = await createUser();
    const minted = await mint(user, ['profile:read']);
    expectError(await update(user.accessToken, minted.id, body), 400, 'VALIDATION_FAILED', fields);
    expect((await listOf(user))[0]!.scopes).toEqual(['profile:read']);
  });

  it.each(['not-a-uuid', 'abc'])('answers 404 (an unknown id, never 400) for %s', async (id) => {
    const user = await createUser();
    expectError(await update(user.accessToken, id, { scopes: ['profile:read'] }), 404, 'NOT_FOUND');
  });

  it('answers 400 naming path.id for an id over 200 characters', async () => {
    const user = await createUser();
    expectError(
      await update(user.accessToken, 'i'.repeat(201), { scopes: ['profile:read'] }),
      400,
      'VALIDATION_FAILED',
      ['path.id'],
    );
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const user = await createUser();
    const minted = await mint(user);
    const result = await invoke(routes.updateTokenScopes, {
      token: user.accessToken,
      path: { id: minted.id },
      rawBody: '{"scopes":[',
    });
    expectError(result, 400, 'MALFORMED_JSON');
  });
});

describeSecurity(routes.updateTokenScopes, {
  request: async ({ user }) => ({ path: { id: (await mint(user, ['profile:read'])).id }, body: { scopes: [] } }),
  unchanged: async ({ user }, request) =>
    expect((await listOf(user)).find((e) => e.id === request.path!.id)!.scopes).toEqual(['profile:read']),
  everyToken: true,
});

describe('PATCH /auth/tokens/{id}/scopes security', () => {
  it('answers 403 INSUFFICIENT_SCOPE to an automation token trying to widen its own scopes', async () => {
    const user = await createUser();
    const minted = await mint(user, ['profile:read']);
    expectError(await update(minted.token, minted.id, { scopes: [...SCOPES] }), 403, 'INSUFFICIENT_SCOPE');
    expect((await listOf(user))[0]!.scopes).toEqual(['profile:read']);
  });
});
