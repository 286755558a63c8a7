import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { type Scope, SCOPES } from '../../lib/auth/scopes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { caseAccess, organizationPlans } from '../../lib/db/schema';
import type { RouteDefinition } from '../../lib/http/route';
import type { RequestSchemas } from '../../lib/http/validate';
import { type OrganizationRole, ROLES_BY_RANK } from '../../lib/organizations/roles';
import { addMember, createCaseRow, createUser, signIn, type TestUser, updateUserRow } from './actors';
import { type Caller, expectedFor, meets, tokenScopes } from './authorization';
import {
  expectData,
  expectError,
  invoke,
  type InvokeOptions,
  type InvokeResult,
  type TypedHandler,
  type TypedInvokeOptions,
} from './invoke';
import {
  type Auth,
  FOREIGN_KEY,
  freshSession,
  logout,
  mintAutomationToken,
  mintLegacyToken,
  resign,
  SERVICE_KEY,
  unsigned,
} from './tokens';
import { auditEventsOfRequest, newRequestId } from './audit';

/** Who a security check sends the request as, and what it acts on. */
export interface SecurityActor {
  /** The caller. */
  user: TestUser;
  /** The organization the request names (path `orgId` or the `organization` header). */
  organizationId: string;
  /** The caller's role in that organization; null when they are not a member. */
  role: OrganizationRole | null;
  /** The owner of that organization, to prepare what the request acts on. */
  owner: TestUser;
  /** Routes with a case rule: a fresh case of the organization, the caller (when a member) holding owner access. Empty otherwise. */
  caseId: string;
}

/** `Request`: the request options, typed from the handler's schemas when the suite is given the handler. */
export interface SecurityOptions<Request extends object = InvokeOptions> {
  /**
   * A valid request as `actor`, without credentials: the suite adds the token, the `organization`
   * header and a client IP. Called once per check, so it may create what the request acts on.
   */
  request: (actor: SecurityActor) => Request | Promise<Request>;
  /** After every request, refused or let through: route-specific assertions on the answer and its effects. */
  after?: (actor: SecurityActor, request: Request, result: InvokeResult) => Promise<void> | void;
  /**
   * Also every kind of bad bearer (forged, tampered, refresh token, ended sessions, expired and
   * disabled automation tokens), inactive accounts, a scope taken away and given back, and every
   * kind of good token, each expecting the route's success status. Routes without an organization rule.
   */
  everyToken?: true;
  /** Every caller let through gets the route's success status (not only "not refused"). */
  succeeds?: true;
  /** After every refusal: asserts that the refused `request` changed nothing. */
  unchanged?: (actor: SecurityActor, request: Request) => Promise<void>;
  /** Prepares each organization the suite uses (e.g. puts it on a plan), before its members are added. */
  setup?: (owner: TestUser) => Promise<void>;
}

let ipCounter = 0;
/** A client IP of its own per request, so per-IP rate limits never couple two checks. */
function uniqueIp(): string {
  ipCounter += 1;
  return `198.19.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
}

async function mintToken(owner: TestUser, scopes: Scope[]): Promise<{ token: string; id: string }> {
  return expectData(await invoke(routes.generateToken, { token: await freshSession(owner), body: { scopes } }));
}

/** The callers the route entry makes worth checking: who is refused (and why), then who passes. */
function callersOf(route: RouteDefinition): Array<{ label?: string; caller: Caller; expired?: true }> {
  const refused: Caller[] = [
    { kind: 'anonymous' },
    { kind: 'malformed-token' },
    { kind: 'revoked-token' },
    { kind: 'logged-out-token' },
    { kind: 'token-without-scope' },
    { kind: 'token-with-scope' },
  ];
  if (route.organization || route.superAdmin) refused.push({ kind: 'other-organization' }, { kind: 'super-admin' });
  if (route.organization) refused.push({ kind: 'inactive-plan-owner' });
  const roles: Caller[] = (route.organization ? ROLES_BY_RANK : (['owner'] as const)).map((role) => ({
    kind: 'role',
    role,
  }));
  return [
    { label: 'an access token past its 15 minutes', caller: { kind: 'malformed-token' }, expired: true },
    ...[...refused, ...roles].map((caller) => ({ caller })),
  ];
}

/**
 * The security checks of one route, derived from its entry in functions/routes.ts (auth, scope,
 * organization role rule and active plan, case rule, super admin) with the expectations of the
 * authorization matrix (test/harness/authorization.ts): no token or a bad, expired, revoked or
 * logged-out one is 401; an automation token without the route's scope (or any, where `scope` is
 * null) is 403 INSUFFICIENT_SCOPE; a member of another organization 403 NOT_A_MEMBER; each role
 * the rule refuses 403 INSUFFICIENT_ROLE; an inactive plan 403 NO_ACTIVE_PLAN where the entry asks
 * for one; every caller the entry lets through is never refused by the auth layer and never a 5xx.
 * With the organization in the header: missing or over 200 characters 400, not an id 403
 * NOT_A_MEMBER. With a case rule: a member without access to the case and the owner of another
 * organization 403 (the rule access level by access level is the case-access matrix's). Without
 * authentication: any token is ignored. Pass the route's `handler` instead of its entry to type
 * the requests from its schemas.
 */
export function describeSecurity<S extends RequestSchemas>(
  handler: TypedHandler<S>,
  options: SecurityOptions<TypedInvokeOptions<S>>,
): void;
export function describeSecurity(route: RouteDefinition, options: SecurityOptions): void;
export function describeSecurity(
  target: RouteDefinition | TypedHandler<RequestSchemas>,
  typedOptions: SecurityOptions<any>,
): void {
  const route = 'definition' in target ? target.definition.route : target;
  // Typed or not, the requests are plain invoke options at run time.
  const options = typedOptions as SecurityOptions;
  describe('security', () => {
    if (route.auth === 'none') {
      it.each([
        ['no token', () => ({})],
        ['a malformed token', () => ({ token: 'not.a.jwt' })],
        ['a signed-in token', async () => ({ token: (await createUser()).accessToken })],
      ] as const)('ignores the token (%s): never 401 or 403 INSUFFICIENT_SCOPE, never 5xx', async (_label, creds) => {
        // Prepare
        const owner = await createUser();
        const request = await options.request({
          user: owner,
          owner,
          role: 'owner',
          organizationId: owner.organizationId,
          caseId: '',
        });
        const requestId = newRequestId(route.operationId);
        const given = await creds();
        // Act
        const result = await invoke(route, {
          ...request,
          ...given,
          headers: { ...request.headers, ...(given as InvokeOptions).headers, 'x-request-id': requestId },
          ip: uniqueIp(),
        });
        // Assess
        expect(meets(route, { outcome: 'token-ignored' }, observed(result)), describeResult(result)).toBeNull();
        expect(result.status, describeResult(result)).toBeLessThan(500);
        await expectAuditTrail(route, result, requestId);
      });
      describeAuditEvent(route, async () => {
        const owner = await createUser();
        const request = await options.request({
          user: owner,
          owner,
          role: 'owner',
          organizationId: owner.organizationId,
          caseId: '',
        });
        const requestId = newRequestId(route.operationId);
        const result = await invoke(route, {
          ...request,
          headers: { ...request.headers, 'x-request-id': requestId },
          ip: uniqueIp(),
        });
        return { result, requestId };
      });
      return;
    }

    let owner: TestUser;
    let otherOwner: TestUser;
    let superAdmin: TestUser;
    let inactiveOwner: TestUser;
    const members = new Map<OrganizationRole, TestUser>();

    beforeAll(async () => {
      if (route.organization) {
        owner = await createUser();
        // Before the members exist: a plan of fewer seats than one member per role is still selectable.
        await options.setup?.(owner);
        members.set('owner', owner);
        for (const role of ROLES_BY_RANK.filter((r) => r !== 'owner'))
          members.set(role, await addMember(owner.organizationId, role));
        // One member of each role is more than a plan's seats; leave room for what the requests invite.
        await db()
          .update(organizationPlans)
          .set({ seats: 100 })
          .where(eq(organizationPlans.organizationId, owner.organizationId));
        inactiveOwner = await createUser();
        await options.setup?.(inactiveOwner);
      }
      otherOwner = await createUser();
      superAdmin = await createUser();
      await updateUserRow(superAdmin.id, { isSuperAdmin: true });
    });

    /** The caller's user and the organization their request names. */
    async function actorFor(caller: Caller): Promise<{ user: TestUser; owner: TestUser }> {
      // Without an organization rule each check gets a user of its own: the route may change them (password, sessions).
      const target = route.organization ? owner : await createUser();
      await (route.organization ? undefined : options.setup?.(target));
      switch (caller.kind) {
        case 'other-organization':
          return { user: otherOwner, owner: target };
        case 'super-admin':
          return { user: superAdmin, owner: target };
        case 'inactive-plan-owner':
          return { user: inactiveOwner, owner: inactiveOwner };
        case 'role':
          return { user: route.organization ? members.get(caller.role)! : target, owner: target };
        default:
          return { user: target, owner: target };
      }
    }

    async function credentialsFor(caller: Caller, user: TestUser): Promise<InvokeOptions> {
      const scopes = tokenScopes(route, SCOPES);
      switch (caller.kind) {
        case 'anonymous':
          return {};
        case 'malformed-token':
          return { headers: { authorization: 'Bearer not-a-token.at-all' } };
        case 'revoked-token': {
          const minted = await mintToken(user, scopes.withScope);
          const revoked = await invoke(routes.revokeToken, {
            token: await freshSession(user),
            path: { id: minted.id },
          });
          expect(revoked.status).toBe(204);
          return { token: minted.token };
        }
        case 'logged-out-token': {
          const token = await freshSession(user);
          expectData(await invoke(routes.logout, { token }));
          return { token };
        }
        case 'token-without-scope':
          return { token: (await mintToken(user, scopes.withoutScope)).token };
        case 'token-with-scope':
          return { token: (await mintToken(user, scopes.withScope)).token };
        default:
          return { token: await freshSession(user) };
      }
    }

    /**
     * Sends the route's request as `caller`; `withCaseAccess: false` sends it as a new member without
     * access to the case; `header` replaces the organization header (null: none).
     */
    async function send(
      caller: Caller,
      {
        expired = false,
        withCaseAccess = true,
        header,
      }: { expired?: boolean; withCaseAccess?: boolean; header?: string | null } = {},
    ) {
      // Prepare
      const found = await actorFor(caller);
      const organizationOwner = found.owner;
      const organizationId = organizationOwner.organizationId;
      const user = withCaseAccess ? found.user : await addMember(organizationId, 'member');
      let caseId = '';
      if (route.case) {
        caseId = (await createCaseRow(organizationId)).id;
        await db().insert(caseAccess).values({ caseId, userId: organizationOwner.id, access: 'owner' });
        const member = caller.kind === 'role' || caller.kind === 'inactive-plan-owner';
        if (withCaseAccess && member && user.id !== organizationOwner.id)
          await db().insert(caseAccess).values({ caseId, userId: user.id, access: 'owner' });
      }
      const role = !withCaseAccess
        ? ('member' as const)
        : caller.kind === 'role'
          ? caller.role
          : user.id === organizationOwner.id
            ? ('owner' as const)
            : null;
      const actor: SecurityActor = { user, organizationId, role, owner: organizationOwner, caseId };
      const request = await options.request(actor);
      // The plan goes inactive once the request is built, so building it may use routes that need one.
      if (caller.kind === 'inactive-plan-owner')
        await db()
          .update(organizationPlans)
          .set({ isActive: false })
          .where(eq(organizationPlans.organizationId, organizationId));
      const tokenOwner = caller.kind === 'token-with-scope' || caller.kind === 'token-without-scope';
      const credentials = expired
        ? { token: await freshSession(user) }
        : await credentialsFor(caller, tokenOwner ? organizationOwner : user);
      const named = header === undefined ? organizationId : header;
      const sendsHeader = route.organization?.from === 'header' || route.organizationHeader === 'required';
      if (expired) testClock.advance(15 * 60 + 1);
      const requestId = newRequestId(route.operationId);
      // Act
      const result = await invoke(route, {
        ...(sendsHeader && named !== null ? { organization: named } : {}),
        ...request,
        ...credentials,
        headers: { ...request.headers, ...credentials.headers, 'x-request-id': requestId },
        ip: uniqueIp(),
      });
      // Back to the time the request was built at, so the assertions after it can use the user's token.
      if (expired) testClock.advance(-(15 * 60 + 1));
      await options.after?.(actor, request, result);
      return { result, actor, request, requestId };
    }

    it.each(callersOf(route).map((c) => [describeCheck(route, c.caller, c.label), c] as const))(
      '%s',
      async (_label, { caller, expired }) => {
        const { result, actor, request, requestId } = await send(caller, { expired });
        // Assess
        await expectAuditTrail(route, result, requestId);
        const expected = expectedFor(route, caller);
        if (expected.outcome === 'refused') {
          expectError(result, expected.status, expected.code);
          expect(result.body.data).toBeUndefined();
          await options.unchanged?.(actor, request);
        } else {
          expect(meets(route, expected, observed(result)), describeResult(result)).toBeNull();
          expect([401, 403], describeResult(result)).not.toContain(result.status);
          expect(result.status, describeResult(result)).toBeLessThan(500);
          if (options.succeeds) expect(result.status, describeResult(result)).toBe(route.successStatus);
        }
      },
    );

    if (route.organization?.from === 'header') {
      it.each([
        ['missing', null],
        ['over 200 characters', 'o'.repeat(201)],
      ])('answers 400 VALIDATION_FAILED naming headers.organization when the header is %s', async (_label, value) => {
        const { result } = await send({ kind: 'role', role: 'owner' }, { header: value });
        expectError(result, 400, 'VALIDATION_FAILED', ['headers.organization']);
      });

      it('answers 403 NOT_A_MEMBER when the header is not an id, as for an organization the caller is not in', async () => {
        expectError((await send({ kind: 'role', role: 'owner' }, { header: 'acme' })).result, 403, 'NOT_A_MEMBER');
      });
    }

    describeAuditEvent(route, async () => {
      const { result, requestId } = await send({ kind: 'role', role: 'owner' });
      return { result, requestId };
    });

    if (options.everyToken) describeEveryToken(route, options);

    if (route.case) {
      // The case rule itself, access level by access level, is the case-access matrix's (test/contract).
      const caseRefusals: Array<[string, Caller, boolean]> = [
        ['a member of the organization without access to the case', { kind: 'role', role: 'member' }, false],
        ['the owner of another organization', { kind: 'other-organization' }, true],
      ];
      it.each(caseRefusals)('answers 403 to %s, with no data', async (_label, caller, withCaseAccess) => {
        const { result, actor, request } = await send(caller, { withCaseAccess });
        expect(result.status, describeResult(result)).toBe(403);
        expect(result.body.data).toBeUndefined();
        await options.unchanged?.(actor, request);
      });
    }
  });
}

/**
 * The audit trail after any request, from the route's `audit` entry: a refused or failed request
 * wrote nothing; a successful one wrote only its route's action (a read exactly one event), and a
 * route that records nothing wrote nothing.
 */
async function expectAuditTrail(route: RouteDefinition, result: InvokeResult, requestId: string): Promise<void> {
  const events = await auditEventsOfRequest(requestId);
  const succeeded = result.status >= 200 && result.status < 300;
  if (!succeeded || !route.audit || !('action' in route.audit)) {
    expect(events, `${route.operationId} ${describeResult(result)}`).toEqual([]);
    return;
  }
  const { action } = route.audit;
  expect(
    events.every((event) => event.action === action),
    `${route.operationId} wrote ${JSON.stringify(events)}`,
  ).toBe(true);
  if (route.audit.read) expect(events).toHaveLength(1);
}

/**
 * For a route whose entry names an audit action: its successful request writes that event (at
 * least one: one per change), committed with the change, and no other.
 */
function describeAuditEvent(
  route: RouteDefinition,
  sendAsOwner: () => Promise<{ result: InvokeResult; requestId: string }>,
): void {
  const audit = route.audit;
  if (!audit || !('action' in audit)) return;
  it(`records ${audit.action} in the audit trail when it succeeds, and nothing else`, async () => {
    const { result, requestId } = await sendAsOwner();
    expect(result.status, describeResult(result)).toBe(route.successStatus);
    const events = await auditEventsOfRequest(requestId);
    expect(events.length, `${route.operationId} wrote no ${audit.action} event`).toBeGreaterThan(0);
    expect(events.map((event) => event.action)).toEqual(events.map(() => audit.action));
  });
}

const observed = (result: InvokeResult) => ({
  status: result.status,
  code: result.body?.error?.code as string | undefined,
});

const describeResult = (result: InvokeResult) => `${result.status} ${JSON.stringify(result.body)}`;

function describeCheck(route: RouteDefinition, caller: Caller, label?: string): string {
  const expected = expectedFor(route, caller);
  const who = label ?? callerLabel(route, caller);
  if (expected.outcome === 'refused') return `answers ${expected.status} ${expected.code} to ${who}`;
  return `lets ${who} through (never 401/403, never 5xx)`;
}

function callerLabel(route: RouteDefinition, caller: Caller): string {
  switch (caller.kind) {
    case 'anonymous':
      return 'no token';
    case 'malformed-token':
      return 'a malformed token';
    case 'revoked-token':
      return 'a revoked automation token';
    case 'logged-out-token':
      return 'a logged-out access token';
    case 'token-without-scope':
      return route.scope ? `an automation token without ${route.scope}` : 'an automation token with every scope';
    case 'token-with-scope':
      return route.scope ? `an automation token with only ${route.scope}` : 'an automation token (full sessions only)';
    case 'other-organization':
      return 'the owner of another organization';
    case 'super-admin':
      return 'a super admin';
    case 'inactive-plan-owner':
      return 'the owner of an organization without an active plan';
    case 'role':
      return `a ${caller.role}`;
  }
}

type TokenCase = [label: string, prepare: (user: TestUser) => Promise<Auth>];
type TokenOf = [label: string, tokenOf: (user: TestUser) => Promise<string>];

/** The bearer battery of `everyToken`: each check with a user of its own, who may be changed by it. */
function describeEveryToken(route: RouteDefinition, options: SecurityOptions): void {
  if (route.organization)
    throw new Error(`${route.operationId}: everyToken is for routes without an organization rule`);
  const scope = route.scope as Scope | null;
  const success = route.successStatus;
  const mintable = scope ? [scope] : [...SCOPES];

  /** Builds the request first: preparing the token may end the user's session or move the clock. */
  async function send(user: TestUser, prepare: (user: TestUser) => Promise<Auth>): Promise<InvokeResult> {
    let caseId = '';
    if (route.case) {
      caseId = (await createCaseRow(user.organizationId)).id;
      await db().insert(caseAccess).values({ caseId, userId: user.id, access: 'owner' });
    }
    const actor: SecurityActor = { user, organizationId: user.organizationId, role: 'owner', owner: user, caseId };
    const request = await options.request(actor);
    const auth = await prepare(user);
    const result = await invoke(route, {
      ...request,
      ...auth,
      headers: { ...request.headers, ...auth.headers },
      ip: uniqueIp(),
    });
    await options.after?.(actor, request, result);
    return result;
  }

  const unauthenticated: TokenCase[] = [
    ['an empty bearer', async () => ({ headers: { authorization: 'Bearer ' } })],
    [
      'a Basic scheme with the right credentials',
      async (u) => ({
        headers: { authorization: `Basic ${Buffer.from(`${u.email}:${u.password}`).toString('base64')}` },
      }),
    ],
    ['the token without the Bearer scheme', async (u) => ({ headers: { authorization: u.accessToken } })],
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
      'a logged-out legacy token',
      async (u) => {
        const legacy = await mintLegacyToken(u);
        await logout(legacy);
        return { token: legacy };
      },
    ],
    [
      'an expired automation token',
      async (u) => {
        const minted = await mintAutomationToken(u, mintable, 1);
        testClock.advance(86_400 + 1);
        return { token: minted.token };
      },
    ],
    [
      'a disabled automation token (scopes emptied)',
      async (u) => {
        const minted = await mintAutomationToken(u, mintable);
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
    // Act
    const result = await send(user, prepare);
    // Assess
    expectError(result, 401, 'UNAUTHENTICATED');
  });

  it.each([
    ['an inactive account', { isActive: false }],
    ['a deleted account', { deletedAt: new Date() }],
    ['an extraction-only account', { accountKind: 'extraction_only' }],
  ] as const)('answers 401 ACCOUNT_INACTIVE for a valid token of %s', async (_label, change) => {
    const user = await createUser();
    const result = await send(user, async (u) => {
      await updateUserRow(u.id, change);
      return { token: u.accessToken };
    });
    expectError(result, 401, 'ACCOUNT_INACTIVE');
  });

  it('accepts the claims re-signed with the service key (so the foreign-key case fails on the key alone)', async () => {
    const user = await createUser();
    const result = await send(user, async (u) => ({ token: await resign(u.accessToken, SERVICE_KEY) }));
    expect(result.status, describeResult(result)).toBe(success);
  });

  if (scope) {
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
      expectError(await send(user, async () => ({ token: minted.token })), 403, 'INSUFFICIENT_SCOPE');
      await rescope(['cases:read', scope]);
      expect((await send(user, async () => ({ token: minted.token }))).status).toBe(success);
    });
  }

  const goodTokens: TokenOf[] = [
    ['the access token of the current sign-in', async (u: TestUser) => u.accessToken],
    ['the access token of a second sign-in', async (u: TestUser) => (await signIn(u)).accessToken],
    [
      'an access token from refresh',
      async (u: TestUser) =>
        expectData(await invoke(routes.refreshToken, { body: { refreshToken: u.refreshToken } })).accessToken as string,
    ],
    ['a legacy full-access token', mintLegacyToken],
    [
      'an access token 14 minutes old',
      async (u: TestUser) => {
        testClock.advance(14 * 60);
        return u.accessToken;
      },
    ],
    ...(scope
      ? [
          [
            `an automation token holding only ${scope}`,
            async (u: TestUser) => (await mintAutomationToken(u, [scope])).token,
          ] satisfies TokenOf,
        ]
      : []),
  ];
  it.each(goodTokens)(`answers ${success} for %s`, async (_label, tokenOf) => {
    const user = await createUser();
    const result = await send(user, async (u) => ({ token: await tokenOf(u) }));
    expect(result.status, describeResult(result)).toBe(success);
  });
}
