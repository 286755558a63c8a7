import { randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { type Scope, SCOPES } from '../../lib/auth/scopes';
import { testClock } from '../../lib/clock';
import type { RouteDefinition } from '../../lib/http/route';
import { createUser, type TestUser, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeResult } from '../harness/invoke';

/**
 * Shared helpers of the User route tests (kept beside them, not in test/harness): minting tokens
 * through the real routes, unique client IPs for rate-limited routes, and the bearer security suite.
 */

/** How a request authenticates: a bearer token, or raw headers for malformed Authorization values. */
export interface Auth {
  token?: string;
  headers?: Record<string, string>;
}

export interface Minted {
  token: string;
  id: string;
}

/** A scoped automation token minted with the user's access token. */
export async function mintAutomationToken(user: TestUser, scopes: readonly Scope[], ttlDays?: number): Promise<Minted> {
  const body = ttlDays === undefined ? { scopes } : { scopes, ttlDays };
  return expectData<Minted>(await invoke(routes.generateToken, { token: user.accessToken, body }));
}

/** A legacy full-access token (generate-token without scopes). */
export async function mintLegacyToken(user: TestUser): Promise<string> {
  const data = expectData<{ token: string }>(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
  expect(data.token).toMatch(/^cebs_lt_/);
  return data.token;
}

export async function revokeAutomationToken(user: TestUser, id: string): Promise<void> {
  const result = await invoke(routes.revokeToken, { token: user.accessToken, path: { id } });
  expect(result.status, JSON.stringify(result.body)).toBe(204);
}

/** Logs in again: a second, independent sign-in session of the same user. */
export async function signInAgain(
  user: TestUser,
  password = user.password,
): Promise<{ accessToken: string; refreshToken: string }> {
  return expectData(await invoke(routes.login, { body: { email: user.email, password } }));
}

export async function logout(token: string): Promise<void> {
  expectData(await invoke(routes.logout, { token }));
}

let ipCounter = 0;
/** A client IP no other test of the file uses, so per-IP rate-limit windows never collide. */
export function uniqueIp(): string {
  ipCounter += 1;
  return `10.${(process.pid >> 8) & 255}.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
}

/** The test run's signing key (vitest.config.ts) and one the service has never seen. */
const SERVICE_KEY = new TextEncoder().encode(process.env.JWT_SECRET ?? '');
const FOREIGN_KEY = new TextEncoder().encode(`another-key-${randomBytes(24).toString('hex')}`);

/** Signs the claims of `accessToken` again, optionally changed, with `key` (HS256). */
export async function resign(accessToken: string, key: Uint8Array, change: { sub?: string } = {}): Promise<string> {
  const claims = decodeJwt(accessToken);
  return new SignJWT({ ...claims, ...change }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
}

/** The same claims with `alg: none` and no signature. */
function unsigned(accessToken: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(decodeJwt(accessToken))}.`;
}

export interface BearerSecurityOptions {
  route: RouteDefinition;
  /**
   * Sends one otherwise valid request as `user` with `auth`. Each test gets a fresh user, so
   * the request may change state (change the password, send mail).
   */
  send: (user: TestUser, auth: Auth) => Promise<InvokeResult>;
}

type AuthCase = [label: string, prepare: (user: TestUser) => Promise<Auth>];

/**
 * The security suite every bearer route of this area runs: who is refused (401, 403) and who is
 * let through. The route table's `scope` decides the automation-token cases: a scoped route needs
 * exactly that scope, a route without one refuses every automation token.
 */
export function describeBearerSecurity({ route, send }: BearerSecurityOptions): void {
  const scope = route.scope as Scope | null;
  const success = route.successStatus;

  describe(`${route.method} ${route.path}: security`, () => {
    const unauthenticated: AuthCase[] = [
      ['no Authorization header', async () => ({})],
      ['an empty bearer', async () => ({ headers: { authorization: 'Bearer ' } })],
      [
        'a Basic scheme with the right credentials',
        async (u) => ({
          headers: { authorization: `Basic ${Buffer.from(`${u.email}:${u.password}`).toString('base64')}` },
        }),
      ],
      ['the token without the Bearer scheme', async (u) => ({ headers: { authorization: u.accessToken } })],
      ['a malformed token', async () => ({ token: 'not.a.jwt' })],
      ['a token of random characters', async () => ({ token: randomBytes(32).toString('base64url') })],
      ['a token signed with another key', async (u) => ({ token: await resign(u.accessToken, FOREIGN_KEY) })],
      ['an unsigned token (alg none)', async (u) => ({ token: unsigned(u.accessToken) })],
      [
        'a tampered signature',
        async (u) => ({ token: `${u.accessToken.slice(0, -4)}${u.accessToken.endsWith('AAAA') ? 'BBBB' : 'AAAA'}` }),
      ],
      [
        "a validly signed token naming another user's id with this session",
        async (u) => ({ token: await resign(u.accessToken, SERVICE_KEY, { sub: (await createUser()).id }) }),
      ],
      ['the refresh token used as bearer', async (u) => ({ token: u.refreshToken })],
      ['an unknown automation token', async () => ({ token: `cebs_at_${randomBytes(32).toString('base64url')}` })],
      ['an unknown legacy token', async () => ({ token: `cebs_lt_${randomBytes(32).toString('base64url')}` })],
      [
        'a logged-out access token',
        async (u) => {
          await logout(u.accessToken);
          return { token: u.accessToken };
        },
      ],
      [
        'a logged-out legacy token',
        async (u) => {
          const legacy = await mintLegacyToken(u);
          await logout(legacy);
          return { token: legacy };
        },
      ],
      [
        'an access token past its 15 minutes',
        async (u) => {
          testClock.advance(15 * 60 + 1);
          return { token: u.accessToken };
        },
      ],
      [
        'a revoked automation token',
        async (u) => {
          const minted = await mintAutomationToken(u, scope ? [scope] : SCOPES);
          await revokeAutomationToken(u, minted.id);
          return { token: minted.token };
        },
      ],
      [
        'an expired automation token',
        async (u) => {
          const minted = await mintAutomationToken(u, scope ? [scope] : SCOPES, 1);
          testClock.advance(86_400 + 1);
          return { token: minted.token };
        },
      ],
      [
        'a disabled automation token (scopes emptied)',
        async (u) => {
          const minted = await mintAutomationToken(u, scope ? [scope] : SCOPES);
          expectData(
            await invoke(routes.updateTokenScopes, {
              token: u.accessToken,
              path: { id: minted.id },
              body: { scopes: [] },
            }),
          );
          return { token: minted.token };
        },
      ],
    ];

    it.each(unauthenticated)('answers 401 UNAUTHENTICATED for %s', async (_label, prepare) => {
      // Prepare
      const user = await createUser();
      const auth = await prepare(user);
      // Act
      const result = await send(user, auth);
      // Assess
      expectError(result, 401, 'UNAUTHENTICATED');
    });

    it.each([
      ['an inactive account', { isActive: false }],
      ['a deleted account', { deletedAt: new Date() }],
      ['an extraction-only account', { accountKind: 'extraction_only' }],
    ] as const)('answers 401 ACCOUNT_INACTIVE for a valid token of %s', async (_label, change) => {
      const user = await createUser();
      await updateUserRow(user.id, change);
      expectError(await send(user, { token: user.accessToken }), 401, 'ACCOUNT_INACTIVE');
    });

    it('accepts the claims re-signed with the service key (so the foreign-key case fails on the key alone)', async () => {
      const user = await createUser();
      const result = await send(user, { token: await resign(user.accessToken, SERVICE_KEY) });
      expect(result.status, JSON.stringify(result.body)).toBe(success);
    });

    if (scope) {
      it(`answers 403 INSUFFICIENT_SCOPE for an automation token with every scope but ${scope}`, async () => {
        const user = await createUser();
        const minted = await mintAutomationToken(
          user,
          SCOPES.filter((s) => s !== scope),
        );
        expectError(await send(user, { token: minted.token }), 403, 'INSUFFICIENT_SCOPE');
      });

      it(`lets an automation token holding only ${scope} through`, async () => {
        const user = await createUser();
        const minted = await mintAutomationToken(user, [scope]);
        const result = await send(user, { token: minted.token });
        expect(result.status, JSON.stringify(result.body)).toBe(success);
      });

      it(`answers 403 once ${scope} is taken away by a scope change, and passes again when given back`, async () => {
        const user = await createUser();
        const minted = await mintAutomationToken(user, [scope, 'cases:read']);
        const rescope = async (scopes: Scope[]) =>
          expectData(
            await invoke(routes.updateTokenScopes, {
              token: user.accessToken,
              path: { id: minted.id },
              body: { scopes },
            }),
          );
        await rescope(['cases:read']);
        expectError(await send(user, { token: minted.token }), 403, 'INSUFFICIENT_SCOPE');
        await rescope(['cases:read', scope]);
        expect((await send(user, { token: minted.token })).status).toBe(success);
      });
    } else {
      it('answers 403 INSUFFICIENT_SCOPE for an automation token holding every scope (full sessions only)', async () => {
        const user = await createUser();
        const minted = await mintAutomationToken(user, SCOPES);
        expectError(await send(user, { token: minted.token }), 403, 'INSUFFICIENT_SCOPE');
      });
    }

    it.each([
      ['the access token of the current sign-in', async (u: TestUser) => u.accessToken],
      ['the access token of a second sign-in', async (u: TestUser) => (await signInAgain(u)).accessToken],
      [
        'an access token from refresh',
        async (u: TestUser) =>
          expectData(await invoke(routes.refreshToken, { body: { refreshToken: u.refreshToken } }))
            .accessToken as string,
      ],
      ['a legacy full-access token', mintLegacyToken],
      [
        'an access token 14 minutes old',
        async (u: TestUser) => {
          testClock.advance(14 * 60);
          return u.accessToken;
        },
      ],
    ])(`answers ${success} for %s`, async (_label, tokenOf) => {
      const user = await createUser();
      const result = await send(user, { token: await tokenOf(user) });
      expect(result.status, JSON.stringify(result.body)).toBe(success);
    });
  });
}
