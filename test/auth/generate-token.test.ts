import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { SCOPES } from '../../lib/auth/scopes';
import { addDays, addMonths, testClock } from '../../lib/clock';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { sessions } from '../../lib/db/schema';
import { createUser, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

const T0 = new Date('2026-11-22T10:00:00.000Z');

let restoreConfig: (() => void) | undefined;
afterEach(() => {
  restoreConfig?.();
  restoreConfig = undefined;
});

/** The caller's automation and legacy session rows, straight from the table. */
const sessionRowsOf = (userId: string) => db().select().from(sessions).where(eq(sessions.userId, userId));

describe('POST /auth/generate-token with scopes (automation token)', () => {
  it('returns the token once with id, label, deduplicated scopes and expiry now + ttlDays', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    // Act
    const result = await invoke(routes.generateToken, {
      token: user.accessToken,
      body: {
        scopes: ['profile:read', 'cases:read', 'profile:read', 'cases:read'],
        label: '  Nightly sync  ',
        ttlDays: 30,
      },
    });
    // Assess
    const data = expectData(result);
    expect(Object.keys(data).sort()).toEqual(['expiresAt', 'id', 'label', 'scopes', 'token']);
    expect(data.token).toMatch(/^cebs_at_[A-Za-z0-9_-]{40,}$/);
    expect(data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(data.label).toBe('Nightly sync');
    expect(data.scopes).toEqual(['profile:read', 'cases:read']);
    expect(data.expiresAt).toBe(addDays(T0, 30).toISOString());
    expect(data.expiresAt).toBe('2026-12-22T10:00:00.000Z');
  });

  it('mints a different token and id each time', async () => {
    const user = await createUser();
    const first = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    const second = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    expect(second.token).not.toBe(first.token);
    expect(second.id).not.toBe(first.id);
  });

  it('defaults to 365 days and a null label', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const data = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    expect(data.label).toBeNull();
    expect(data.expiresAt).toBe(addDays(T0, 365).toISOString());
  });

  it('uses the configured default lifetime when ttlDays is not sent', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    restoreConfig = overrideConfig({ AUTOMATION_TOKEN_DEFAULT_TTL_DAYS: 90 });
    const data = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    expect(data.expiresAt).toBe(addDays(T0, 90).toISOString());
  });

  it('caps a configured default above 400 days at 400 days', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    restoreConfig = overrideConfig({ AUTOMATION_TOKEN_DEFAULT_TTL_DAYS: 1000 });
    const data = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    expect(data.expiresAt).toBe(addDays(T0, 400).toISOString());
  });

  it.each([1, 400])('accepts ttlDays %i', async (ttlDays) => {
    testClock.freeze(T0);
    const user = await createUser();
    const data = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'], ttlDays } }),
    );
    expect(data.expiresAt).toBe(addDays(T0, ttlDays).toISOString());
  });

  it.each([401, 5000, Number.MAX_SAFE_INTEGER])(
    'caps ttlDays %i at 400 days instead of refusing it',
    async (ttlDays) => {
      testClock.freeze(T0);
      const user = await createUser();
      const data = expectData(
        await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'], ttlDays } }),
      );
      expect(data.expiresAt).toBe(addDays(T0, 400).toISOString());
      const [row] = (await sessionRowsOf(user.id)).filter((r) => r.kind === 'automation');
      expect(row!.expiresAt.toISOString()).toBe(addDays(T0, 400).toISOString());
    },
  );

  it('ignores a field it does not know (expiresAt): the lifetime is the default', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const body = { scopes: ['profile:read'], expiresAt: '2030-01-01T00:00:00Z' };
    const data = expectData(await invoke(routes.generateToken, { token: user.accessToken, body }));
    expect(data.expiresAt).toBe(addDays(T0, 365).toISOString());
  });

  it('accepts every supported scope at once', async () => {
    const user = await createUser();
    const data = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: [...SCOPES] } }),
    );
    expect(data.scopes).toEqual([...SCOPES]);
  });

  it('stores the token only as its SHA-256', async () => {
    // Prepare
    const user = await createUser();
    // Act
    const data = expectData(
      await invoke(routes.generateToken, {
        token: user.accessToken,
        body: { scopes: ['profile:read'], label: 'hashed' },
      }),
    );
    // Assess
    const rows = await sessionRowsOf(user.id);
    const row = rows.find((r) => r.id === data.id);
    expect(row).toMatchObject({
      kind: 'automation',
      tokenHash: sha256(data.token),
      label: 'hashed',
      scopes: ['profile:read'],
      revokedAt: null,
      lastUsedAt: null,
    });
    const everything = JSON.stringify(await db().select().from(sessions));
    expect(everything).not.toContain(data.token);
    expect(everything).not.toContain(data.token.slice('cebs_at_'.length));
    expect(everything).toContain(sha256(data.token));
  });

  it('works as a bearer on a route its scope covers and stamps its last use', async () => {
    // Prepare
    const user = await createUser();
    const minted = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    testClock.freeze(T0);
    // Act
    const result = await invoke(routes.getProfile, { token: minted.token });
    // Assess
    expect(expectData(result)).toMatchObject({ id: user.id, email: user.email });
    const [row] = await db().select().from(sessions).where(eq(sessions.id, minted.id));
    expect(row!.lastUsedAt?.toISOString()).toBe(T0.toISOString());
  });

  it('gets 403 INSUFFICIENT_SCOPE on a route whose scope it lacks', async () => {
    const user = await createUser();
    const minted = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    const result = await invoke(routes.updateProfile, { token: minted.token, body: { name: 'Renamed By Token' } });
    expectError(result, 403, 'INSUFFICIENT_SCOPE');
    expect(result.body.error.message).toContain('profile:write');
    const profile = expectData(await invoke(routes.getProfile, { token: user.accessToken }));
    expect(profile.name).toBe(user.name);
  });

  it.each([
    ['generate-token', routes.generateToken, { body: { scopes: ['profile:read'] } }],
    ['generate-token (legacy)', routes.generateToken, { body: {} }],
    ['list tokens', routes.listTokens, {}],
    ['change password', routes.changePassword, { body: { oldPassword: 'whatever-old', newPassword: 'whatever-new' } }],
    ['logout', routes.logout, {}],
  ] as const)(
    'gets 403 INSUFFICIENT_SCOPE on %s, a route with no scope, even holding every scope',
    async (_label, route, options) => {
      // Prepare
      const user = await createUser();
      const minted = expectData(
        await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: [...SCOPES] } }),
      );
      // Act
      const result = await invoke(route, { token: minted.token, ...options });
      // Assess
      expectError(result, 403, 'INSUFFICIENT_SCOPE');
      const rows = await sessionRowsOf(user.id);
      expect(rows.filter((r) => r.kind !== 'login')).toHaveLength(1);
    },
  );

  it('stops working at its expiry (401), and works until then', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    const minted = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'], ttlDays: 2 } }),
    );
    // Act + Assess: one second before expiry it works
    testClock.advance(2 * 86_400 - 1);
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    // at expiry and after it does not
    testClock.advance(1);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
    testClock.advance(86_400);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('stops working past the default 365 days', async () => {
    const user = await createUser();
    const minted = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    testClock.advance(364 * 86_400);
    expectData(await invoke(routes.getProfile, { token: minted.token }));
    testClock.advance(2 * 86_400);
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'UNAUTHENTICATED');
  });

  it('gets 401 once its user is inactive', async () => {
    const user = await createUser();
    const minted = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    await updateUserRow(user.id, { isActive: false });
    expectError(await invoke(routes.getProfile, { token: minted.token }), 401, 'ACCOUNT_INACTIVE');
  });
});

describe('POST /auth/generate-token without scopes (legacy token)', () => {
  it('returns only token and validTill, 5 years ahead', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser();
    // Act
    const data = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    // Assess
    expect(Object.keys(data).sort()).toEqual(['token', 'validTill']);
    expect(data.token).toMatch(/^cebs_lt_[A-Za-z0-9_-]{40,}$/);
    expect(data.validTill).toBe(addMonths(T0, 60).toISOString());
    expect(data.validTill).toBe('2031-11-22T10:00:00.000Z');
  });

  it('stores the legacy token only as its SHA-256', async () => {
    const user = await createUser();
    const data = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    const legacy = (await sessionRowsOf(user.id)).filter((r) => r.kind === 'legacy');
    expect(legacy).toHaveLength(1);
    expect(legacy[0]).toMatchObject({ tokenHash: sha256(data.token), scopes: null, label: null });
    expect(JSON.stringify(await db().select().from(sessions))).not.toContain(data.token);
  });

  it('has full access: profile, token management and minting more tokens', async () => {
    // Prepare
    const user = await createUser();
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    // Act + Assess
    expect(expectData(await invoke(routes.getProfile, { token: legacy.token })).id).toBe(user.id);
    expect(
      expectData(await invoke(routes.updateProfile, { token: legacy.token, body: { name: 'Legacy Renamed' } })).name,
    ).toBe('Legacy Renamed');
    const scoped = expectData(
      await invoke(routes.generateToken, {
        token: legacy.token,
        body: { scopes: ['cases:read'], label: 'from legacy' },
      }),
    );
    expect(scoped.token).toMatch(/^cebs_at_/);
    const another = expectData(await invoke(routes.generateToken, { token: legacy.token, body: {} }));
    expect(another.token).toMatch(/^cebs_lt_/);
    const list = expectData(await invoke(routes.listTokens, { token: legacy.token }));
    expect(list.map((t: { id: string }) => t.id)).toEqual([scoped.id]);
  });

  it('is not listed by GET /auth/tokens', async () => {
    const user = await createUser();
    expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expect(expectData(await invoke(routes.listTokens, { token: user.accessToken }))).toEqual([]);
  });

  it('works past 400 days and stops at 5 years', async () => {
    testClock.freeze(T0);
    const user = await createUser();
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    testClock.advance(4 * 365 * 86_400);
    expectData(await invoke(routes.getProfile, { token: legacy.token }));
    testClock.freeze(new Date(legacy.validTill));
    expectError(await invoke(routes.getProfile, { token: legacy.token }), 401, 'UNAUTHENTICATED');
  });

  it('is still minted while automation tokens are off', async () => {
    const user = await createUser();
    restoreConfig = overrideConfig({ FEATURE_AUTOMATION_TOKENS: false });
    const data = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expect(data.token).toMatch(/^cebs_lt_/);
    expectData(await invoke(routes.getProfile, { token: data.token }));
  });
});

describe('POST /auth/generate-token errors', () => {
  it.each([
    ['label', { label: 'CI' }],
    ['ttlDays', { ttlDays: 30 }],
    ['label and ttlDays', { label: 'CI', ttlDays: 30 }],
    ['ttlDays over 400', { ttlDays: 401 }],
  ])('answers 400 for %s without scopes and mints nothing', async (_label, body) => {
    const user = await createUser();
    const result = await invoke(routes.generateToken, { token: user.accessToken, body });
    expectError(result, 400, 'BAD_REQUEST');
    expect((await sessionRowsOf(user.id)).filter((r) => r.kind !== 'login')).toEqual([]);
  });

  it('answers 400 UNSUPPORTED_SCOPE for an empty scope list and mints nothing', async () => {
    const user = await createUser();
    expectError(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: [] } }),
      400,
      'UNSUPPORTED_SCOPE',
    );
    expect((await sessionRowsOf(user.id)).filter((r) => r.kind !== 'login')).toEqual([]);
  });

  it.each([
    [{ scopes: ['admin:all'] }, ['body.scopes.0']],
    [{ scopes: ['profile:read', 'profile:delete'] }, ['body.scopes.1']],
    [{ scopes: ['PROFILE:READ'] }, ['body.scopes.0']],
    [{ scopes: 'profile:read' }, ['body.scopes']],
    [{ scopes: ['profile:read'], ttlDays: 0 }, ['body.ttlDays']],
    [{ scopes: ['profile:read'], ttlDays: -5 }, ['body.ttlDays']],
    [{ scopes: ['profile:read'], ttlDays: 1.5 }, ['body.ttlDays']],
    [{ scopes: ['profile:read'], ttlDays: '30' }, ['body.ttlDays']],
    [{ scopes: ['profile:read'], label: '' }, ['body.label']],
    [{ scopes: ['profile:read'], label: '   ' }, ['body.label']],
    [{ scopes: ['profile:read'], label: 'x'.repeat(101) }, ['body.label']],
    [{ scopes: ['profile:read'], label: 42 }, ['body.label']],
    [{ scopes: ['profile:read'], label: 'ci\u0000bot' }, ['body.label']],
    [{ scopes: ['profile:read'], ttlDays: Number.MAX_SAFE_INTEGER + 2 }, ['body.ttlDays']],
    [{ scopes: ['admin:all'], ttlDays: 0 }, ['body.scopes.0', 'body.ttlDays']],
    [{ ttlDays: 0 }, ['body.ttlDays']],
  ])('answers 400 VALIDATION_FAILED for %j naming %j', async (body, fields) => {
    const user = await createUser();
    expectError(
      await invoke(routes.generateToken, { token: user.accessToken, body }),
      400,
      'VALIDATION_FAILED',
      fields,
    );
    expect((await sessionRowsOf(user.id)).filter((r) => r.kind !== 'login')).toEqual([]);
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const user = await createUser();
    expectError(
      await invoke(routes.generateToken, { token: user.accessToken, rawBody: '{"scopes":' }),
      400,
      'MALFORMED_JSON',
    );
  });

  it('answers 403 FEATURE_DISABLED for a scoped token while automation tokens are off, and mints nothing', async () => {
    // Prepare
    const user = await createUser();
    restoreConfig = overrideConfig({ FEATURE_AUTOMATION_TOKENS: false });
    // Act
    const result = await invoke(routes.generateToken, {
      token: user.accessToken,
      body: { scopes: ['profile:read'], label: 'off' },
    });
    // Assess
    expectError(result, 403, 'FEATURE_DISABLED');
    expect((await sessionRowsOf(user.id)).filter((r) => r.kind === 'automation')).toEqual([]);
  });

  it('answers 401 for an inactive user', async () => {
    const user = await createUser();
    await updateUserRow(user.id, { isActive: false });
    const result = await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } });
    expectError(result, 401, 'ACCOUNT_INACTIVE');
    expect((await sessionRowsOf(user.id)).filter((r) => r.kind !== 'login')).toEqual([]);
  });
});

describe('POST /auth/generate-token security', () => {
  it.each([
    ['no bearer token', undefined],
    ['a malformed token', 'not-a-token'],
    ['an unknown automation token', 'cebs_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['an unknown legacy token', 'cebs_lt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['a refresh token', 'cebs_rt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['a forged JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4Iiwic2lkIjoieSJ9.c2lnbmF0dXJl'],
  ])('answers 401 UNAUTHENTICATED with %s', async (_label, token) => {
    expectError(
      await invoke(routes.generateToken, { token, body: { scopes: ['profile:read'] } }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('answers 401 for a non-Bearer authorization header', async () => {
    const user = await createUser();
    const result = await invoke(routes.generateToken, {
      headers: { authorization: `Basic ${user.accessToken}` },
      body: {},
    });
    expectError(result, 401, 'UNAUTHENTICATED');
  });

  it('answers 401 for the refresh token of a live session', async () => {
    const user = await createUser();
    expectError(await invoke(routes.generateToken, { token: user.refreshToken, body: {} }), 401, 'UNAUTHENTICATED');
  });

  it('answers 401 for a logged-out access token', async () => {
    const user = await createUser();
    expectData(await invoke(routes.logout, { token: user.accessToken }));
    expectError(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
      401,
      'UNAUTHENTICATED',
    );
    expectError(await invoke(routes.generateToken, { token: user.accessToken, body: {} }), 401, 'UNAUTHENTICATED');
    expect((await sessionRowsOf(user.id)).filter((r) => r.kind !== 'login')).toEqual([]);
  });

  it('answers 401 before validating the body of an anonymous caller', async () => {
    expectError(
      await invoke(routes.generateToken, { body: { scopes: ['nope'], ttlDays: 9999 } }),
      401,
      'UNAUTHENTICATED',
    );
  });
});

describeSecurity(routes.generateToken, { request: () => ({ body: { scopes: ['profile:read'] } }), everyToken: true });
