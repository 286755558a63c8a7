import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addDays, testClock } from '../../lib/clock';
import { overrideConfig } from '../../lib/config';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

const T0 = new Date('2026-11-22T10:00:00.000Z');
const ENTRY_KEYS = ['createdAt', 'expiresAt', 'id', 'label', 'lastUsedAt', 'revoked', 'scopes'];

let restoreConfig: (() => void) | undefined;
afterEach(() => {
  restoreConfig?.();
  restoreConfig = undefined;
});

interface Minted {
  token: string;
  id: string;
  label: string | null;
  scopes: string[];
  expiresAt: string;
}

async function mint(user: TestUser, body: { scopes: string[]; label?: string; ttlDays?: number }): Promise<Minted> {
  return expectData<Minted>(await invoke(routes.generateToken, { token: user.accessToken, body }));
}

const list = async (user: TestUser) =>
  expectData<Array<Record<string, unknown>>>(await invoke(routes.listTokens, { token: user.accessToken }));

describe('GET /auth/tokens', () => {
  it('lists the caller’s automation tokens newest first with every field of the entry', async () => {
    // Prepare: three tokens, one minute apart
    testClock.freeze(T0);
    const user = await createUser();
    const first = await mint(user, { scopes: ['profile:read'], label: 'first', ttlDays: 10 });
    testClock.advance(60);
    const second = await mint(user, { scopes: ['cases:read', 'material:read'], ttlDays: 20 });
    testClock.advance(60);
    const third = await mint(user, { scopes: ['billing:read'], label: 'third' });
    // Act
    const entries = await list(user);
    // Assess
    expect(entries).toEqual([
      {
        id: third.id,
        label: 'third',
        scopes: ['billing:read'],
        lastUsedAt: null,
        expiresAt: addDays(new Date(T0.getTime() + 120_000), 365).toISOString(),
        revoked: false,
        createdAt: new Date(T0.getTime() + 120_000).toISOString(),
      },
      {
        id: second.id,
        label: null,
        scopes: ['cases:read', 'material:read'],
        lastUsedAt: null,
        expiresAt: addDays(new Date(T0.getTime() + 60_000), 20).toISOString(),
        revoked: false,
        createdAt: new Date(T0.getTime() + 60_000).toISOString(),
      },
      {
        id: first.id,
        label: 'first',
        scopes: ['profile:read'],
        lastUsedAt: null,
        expiresAt: addDays(T0, 10).toISOString(),
        revoked: false,
        createdAt: T0.toISOString(),
      },
    ]);
  });

  it('orders tokens created in the same instant newest first too', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await mint(user, { scopes: ['profile:read'], label: `t${i}` })).id);
    const entries = await list(user);
    expect(entries.map((e) => e.id)).toEqual([...ids].reverse());
  });

  it('answers an empty list for a user with no automation tokens', async () => {
    const user = await createUser();
    expect(await list(user)).toEqual([]);
  });

  it('never returns a token value or hash', async () => {
    // Prepare
    const user = await createUser();
    const minted = await mint(user, { scopes: ['profile:read'], label: 'secret holder' });
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    // Act
    const result = await invoke(routes.listTokens, { token: user.accessToken });
    // Assess
    const entries = expectData<Array<Record<string, unknown>>>(result);
    expect(entries).toHaveLength(1);
    expect(Object.keys(entries[0]!).sort()).toEqual(ENTRY_KEYS);
    for (const entry of entries) for (const key of Object.keys(entry)) expect(key.toLowerCase()).not.toContain('token');
    for (const entry of entries) for (const key of Object.keys(entry)) expect(key.toLowerCase()).not.toContain('hash');
    const raw = JSON.stringify(result.body);
    expect(raw).not.toContain(minted.token);
    expect(raw).not.toContain(minted.token.slice('cebs_at_'.length));
    expect(raw).not.toContain(sha256(minted.token));
    expect(raw).not.toContain('cebs_');
  });

  it('shows lastUsedAt as null before use and the time of the latest use after', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user, { scopes: ['profile:read'] });
    expect((await list(user))[0]!.lastUsedAt).toBeNull();
    // Act
    testClock.advance(600);
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    // Assess
    const afterFirstUse = new Date(T0.getTime() + 600_000).toISOString();
    expect((await list(user))[0]!.lastUsedAt).toBe(afterFirstUse);
    testClock.advance(60);
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    expect((await list(user))[0]!.lastUsedAt).toBe(new Date(T0.getTime() + 660_000).toISOString());
  });

  it('stamps lastUsedAt even when the use was refused for a missing scope', async () => {
    // The token authenticated; only the scope check refused it. Documented as "last use".
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user, { scopes: ['profile:read'] });
    expectError(
      await invoke(routes.updateProfile, { token: minted.token, body: { name: 'Nope' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect((await list(user))[0]!.lastUsedAt).toBe(T0.toISOString());
  });

  it('does not stamp lastUsedAt when the user’s own session calls the API', async () => {
    const user = await createUser();
    await mint(user, { scopes: ['profile:read'] });
    expectData(await invoke(routes.getProfile, { token: user.accessToken }));
    expect((await list(user))[0]!.lastUsedAt).toBeNull();
  });

  it('shows revoked tokens with revoked: true', async () => {
    const user = await createUser();
    const kept = await mint(user, { scopes: ['profile:read'], label: 'kept' });
    const revoked = await mint(user, { scopes: ['profile:read'], label: 'revoked' });
    expect((await invoke(routes.revokeToken, { token: user.accessToken, path: { id: revoked.id } })).status).toBe(204);
    const entries = await list(user);
    expect(entries.map((e) => [e.id, e.revoked])).toEqual([
      [revoked.id, true],
      [kept.id, false],
    ]);
  });

  it('still lists expired tokens, with their expiry', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const minted = await mint(user, { scopes: ['profile:read'], ttlDays: 1 });
    testClock.advance(86_400 + 1);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
    const { accessToken } = expectData(
      await invoke(routes.login, { body: { email: user.email, password: user.password } }),
    );
    const entries = expectData(await invoke(routes.listTokens, { token: accessToken }));
    expect(entries).toEqual([
      expect.objectContaining({ id: minted.id, expiresAt: addDays(T0, 1).toISOString(), revoked: false }),
    ]);
  });

  it('does not list legacy tokens or sign-in sessions', async () => {
    const user = await createUser();
    expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
    const scoped = await mint(user, { scopes: ['profile:read'] });
    expect((await list(user)).map((e) => e.id)).toEqual([scoped.id]);
  });

  it('does not list another user’s tokens', async () => {
    // Prepare
    const alice = await createUser();
    const bob = await createUser();
    const alicesToken = await mint(alice, { scopes: ['profile:read'], label: 'alice' });
    const bobsToken = await mint(bob, { scopes: ['cases:read'], label: 'bob' });
    // Act
    const alicesList = await list(alice);
    const bobsList = await list(bob);
    // Assess
    expect(alicesList.map((e) => e.id)).toEqual([alicesToken.id]);
    expect(bobsList.map((e) => e.id)).toEqual([bobsToken.id]);
  });

  it('answers the same list to a legacy token of the same user', async () => {
    const user = await createUser();
    const scoped = await mint(user, { scopes: ['profile:read'] });
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    const entries = expectData(await invoke(routes.listTokens, { token: legacy.token }));
    expect(entries.map((e: { id: string }) => e.id)).toEqual([scoped.id]);
  });

  it('still lists while automation tokens are off', async () => {
    const user = await createUser();
    const scoped = await mint(user, { scopes: ['profile:read'] });
    restoreConfig = overrideConfig({ FEATURE_AUTOMATION_TOKENS: false });
    expect((await list(user)).map((e) => e.id)).toEqual([scoped.id]);
  });
});

describeSecurity(routes.listTokens, { request: () => ({}), everyToken: true });
