import type { AuditAction } from '../audit/actions';
import type { Scope } from '../auth/scopes';
import type { CaseRule } from '../cases/rules';
import type { RoleRule } from '../organizations/roles';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One entry of functions/routes.ts: everything infra, the local server and the middleware need. */
export interface RouteDefinition {
  operationId: string;
  method: HttpMethod;
  /** API Gateway style: /auth/tokens/{id} */
  path: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  handler: `functions/${string}.ts`;
  summary: string;
  auth: 'none' | 'bearer';
  /**
   * Scope an automation token needs to call this route. null: only full sessions (sign-in or
   * legacy token) may call it, never a scoped token.
   */
  scope: Scope | null;
  /** Where the organization comes from, and the role the caller needs in it. */
  organization?: {
    from: 'header' | 'path';
    role: RoleRule;
    /** Organization must have an active plan (403 otherwise). */
    activePlan?: boolean;
    /**
     * A path parameter naming a user: when it names the caller, any member passes (the role and
     * active-plan rules are for acting on others), as when a member leaves an organization.
     */
    self?: string;
  };
  /**
   * The route acts on one case (`caseId` in the path, or in the query for device-note import): who
   * may use it, from lib/cases/rules.ts. A case of another organization than the header is 403.
   */
  case?: CaseRule;
  /** The `organization` header is declared required by the contract even when not used for the check. */
  organizationHeader?: 'required';
  superAdmin?: boolean;
  internal: boolean;
  /** Ours, not the contract's (x-extension in the API description). */
  extension?: boolean;
  successStatus: 200 | 201 | 202 | 204;
  /** The reject-invitation answer has no `data`; 204 answers have no body at all. */
  envelope?: 'no-data';
  /** The handler gets the body unparsed (`rawBody`), e.g. to verify a webhook signature over it. */
  rawBody?: true;
  /**
   * The route answers a credential (access, refresh or automation token) or takes a password in
   * its body. Its `Idempotency-Key` is ignored: a stored answer would hand the secret out again to
   * whoever sends the key, and the stored request fingerprint would hash the password. Each
   * request runs; nothing of it is stored in idempotency_keys.
   */
  credential?: true;
  /**
   * The service's own per-client limit, counted in Postgres: per user on a signed-in request, per
   * client address (IPv6: its /64) on an anonymous one. Routes naming the same `shared` group count
   * against one allowance per client (their `perMinute` must be equal).
   */
  rateLimit?: { perMinute: number; shared?: RateLimitGroup };
  /** API Gateway throttle for the route: steady requests per second and burst. */
  throttle: { rate: number; burst: number };
  lambda?: { memoryMb?: number; timeoutSeconds?: number; reservedConcurrency?: number };
  /**
   * What the route writes to the organization's audit trail (lib/audit). `action`: the event its
   * domain function records with each change, in the change's transaction; with `read: true` the
   * endpoint records it after a successful read of case evidence. `none`: why the route records
   * nothing (it changes nothing, or nothing of an organization). Every route but plain reads says.
   */
  audit?: { action: AuditAction; read?: true } | { none: string };
  /**
   * The error statuses the contract (or docs/decisions.md where it is silent) names for the route,
   * beyond those its rules already imply (auth, organization, case, rate limit, input: see
   * `derivedErrorStatuses` in infra/openapi/statuses.ts).
   */
  errors?: readonly ErrorStatus[];
}

/** Limits several routes count together: `enumeration`, the anonymous routes that tell whether an address has an account. */
export type RateLimitGroup = 'enumeration';

/** The error statuses an operation can be described with (each has one response in the API description). */
export const ERROR_STATUSES = [400, 401, 403, 404, 409, 429, 500, 503] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

export const DEFAULT_THROTTLE = { rate: 50, burst: 100 } as const;

/** A route's function timeout when its entry does not set `lambda.timeoutSeconds`. */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 10;

/** How long the route's function may run (the local server holds each request to it too). */
export function functionTimeoutSeconds(route: RouteDefinition): number {
  return route.lambda?.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS;
}

/** What `namedRoute` fills in when an entry does not say. */
const ROUTE_DEFAULTS = {
  /** No scope: only full sessions may call the route, never an automation token. */
  scope: null,
  internal: false,
  successStatus: 200,
  throttle: DEFAULT_THROTTLE,
  errors: [],
} as const;

type Defaulted = keyof typeof ROUTE_DEFAULTS;

/** An entry as written in the route table: what differs from the defaults. */
export type RouteSpec = Omit<RouteDefinition, 'operationId' | 'handler' | Defaulted> &
  Partial<Pick<RouteDefinition, 'handler' | Defaulted>>;

/** The entry with its defaults, keeping the literal types handlers are typed from (auth, organization). */
export type NamedRoute<K extends string, S extends RouteSpec> = Omit<typeof ROUTE_DEFAULTS, keyof S> &
  S & {
    operationId: K;
    handler: RouteDefinition['handler'];
  };

/** The handler path of an entry: functions/<area>/<kebab-case name>.ts. */
const kebabCase = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * One route of functions/routes.ts: its operation id, its area (the folder under functions/), then
 * its method, path and what differs from the defaults. The handler is
 * `functions/<area>/<kebab-case name>.ts` unless `handler` says otherwise.
 */
export function namedRoute<const K extends string, const S extends RouteSpec>(
  name: K,
  area: string,
  spec: S,
): NamedRoute<K, S> {
  const route: RouteDefinition = {
    operationId: name,
    handler: `functions/${area}/${kebabCase(name)}.ts`,
    ...ROUTE_DEFAULTS,
    ...spec,
  };
  return route as never;
}
