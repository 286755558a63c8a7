import type { Scope } from '../../lib/auth/scopes';
import type { ErrorCode } from '../../lib/http/errors';
import type { RouteDefinition } from '../../lib/http/route';
import { type OrganizationRole, ROLES_BY_RANK, roleSatisfies } from '../../lib/organizations/roles';

/**
 * Who calls, in the authorization matrix. Every caller but the first four is a real user with a
 * live sign-in session; "the organization" is the one the request names (path orgId, header).
 */
export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'malformed-token' }
  | { kind: 'revoked-token' }
  | { kind: 'logged-out-token' }
  /** The owner's automation token holding every scope but the route's. */
  | { kind: 'token-without-scope' }
  /** The owner's automation token holding only the route's scope. */
  | { kind: 'token-with-scope' }
  /** Owner of another organization, calling on this one. */
  | { kind: 'other-organization' }
  /** A super admin who is not a member of the organization. */
  | { kind: 'super-admin' }
  /** Owner of an organization without an active plan, calling on it. */
  | { kind: 'inactive-plan-owner' }
  | { kind: 'role'; role: OrganizationRole };

export const CALLERS: readonly Caller[] = [
  { kind: 'anonymous' },
  { kind: 'malformed-token' },
  { kind: 'revoked-token' },
  { kind: 'logged-out-token' },
  { kind: 'token-without-scope' },
  { kind: 'token-with-scope' },
  { kind: 'other-organization' },
  { kind: 'super-admin' },
  { kind: 'inactive-plan-owner' },
  ...ROLES_BY_RANK.map((role) => ({ kind: 'role', role }) as const),
];

export const callerName = (caller: Caller) => (caller.kind === 'role' ? caller.role : caller.kind);

/** What the matrix expects of one route and caller. */
export type Expected =
  /** Refused by the auth layer with this status and code. */
  | { outcome: 'refused'; status: 401 | 403; code: ErrorCode }
  /** Let through every auth check: no 401, no refusal code of the auth layer, and no 5xx. */
  | { outcome: 'allowed' }
  /** Signed in; whether the resource is theirs is the handler's business (no org rule on the route). */
  | { outcome: 'authenticated' }
  /** A route without authentication: the token is never looked at. */
  | { outcome: 'token-ignored' };

/** The refusal codes of the auth layer (lib/http/authenticate.ts, organization-context.ts). */
export const AUTH_REFUSALS: readonly ErrorCode[] = [
  'UNAUTHENTICATED',
  'INSUFFICIENT_SCOPE',
  'NOT_A_MEMBER',
  'INSUFFICIENT_ROLE',
  'NO_ACTIVE_PLAN',
];

/**
 * The expected answer, computed from the route entry in the order the middleware checks:
 * bearer token (401) -> automation-token scope (403) -> super admin (403) -> [input validation]
 * -> membership of the organization (403) -> role rule (403, roleSatisfies) -> active plan (403).
 */
export function expectedFor(route: RouteDefinition, caller: Caller): Expected {
  if (route.auth === 'none') return { outcome: 'token-ignored' };
  switch (caller.kind) {
    case 'anonymous':
    case 'malformed-token':
    case 'revoked-token':
    case 'logged-out-token':
      return { outcome: 'refused', status: 401, code: 'UNAUTHENTICATED' };
    case 'token-without-scope':
      return { outcome: 'refused', status: 403, code: 'INSUFFICIENT_SCOPE' };
    case 'token-with-scope':
      if (route.scope === null) return { outcome: 'refused', status: 403, code: 'INSUFFICIENT_SCOPE' };
      return expectedFor(route, { kind: 'role', role: 'owner' });
  }
  const isSuperAdmin = caller.kind === 'super-admin';
  if (route.superAdmin && !isSuperAdmin) return { outcome: 'refused', status: 403, code: 'FORBIDDEN' };
  const rule = route.organization;
  if (!rule) return caller.kind === 'role' || route.superAdmin ? { outcome: 'allowed' } : { outcome: 'authenticated' };
  const role: OrganizationRole | null =
    caller.kind === 'role' ? caller.role : caller.kind === 'inactive-plan-owner' ? 'owner' : null;
  if (!role) return { outcome: 'refused', status: 403, code: 'NOT_A_MEMBER' };
  if (!roleSatisfies(role, rule.role)) return { outcome: 'refused', status: 403, code: 'INSUFFICIENT_ROLE' };
  if (rule.activePlan && caller.kind === 'inactive-plan-owner')
    return { outcome: 'refused', status: 403, code: 'NO_ACTIVE_PLAN' };
  return { outcome: 'allowed' };
}

/** The scopes of the two automation tokens a route's matrix uses. */
export function tokenScopes(
  route: RouteDefinition,
  all: readonly Scope[],
): { withScope: Scope[]; withoutScope: Scope[] } {
  return route.scope === null
    ? { withScope: [...all], withoutScope: [...all] }
    : { withScope: [route.scope], withoutScope: all.filter((s) => s !== route.scope) };
}

export interface Observed {
  status: number;
  code: string | undefined;
}

/** Whether an answer meets the expectation; the reason when it does not. */
export function meets(route: RouteDefinition, expected: Expected, observed: Observed): string | null {
  const refusals: readonly string[] = route.superAdmin ? [...AUTH_REFUSALS, 'FORBIDDEN'] : AUTH_REFUSALS;
  const refusedByAuth = observed.status === 401 || (observed.status === 403 && refusals.includes(observed.code ?? ''));
  // No outcome accepts a server error: a 500 would hide a check that crashed.
  if (observed.status >= 500) return `got a server error (${observed.status})`;
  switch (expected.outcome) {
    case 'refused':
      return observed.status === expected.status && observed.code === expected.code
        ? null
        : `expected ${expected.status} ${expected.code}`;
    case 'allowed':
      return refusedByAuth ? 'expected to be let through' : null;
    case 'authenticated':
      return observed.status === 401 || observed.code === 'INSUFFICIENT_SCOPE' ? 'expected to be authenticated' : null;
    case 'token-ignored':
      return observed.code === 'UNAUTHENTICATED' || observed.code === 'INSUFFICIENT_SCOPE'
        ? 'expected the token to be ignored'
        : null;
  }
}
