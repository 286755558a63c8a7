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
  successStatus: 200 | 201 | 204;
  /** The reject-invitation answer has no `data`; 204 answers have no body at all. */
  envelope?: 'no-data';
  /** The handler gets the body unparsed (`rawBody`), e.g. to verify a webhook signature over it. */
  rawBody?: true;
  /** The service's own per-client limit, counted in Postgres: per user on a signed-in request, per client IP on an anonymous one. */
  rateLimit?: { perMinute: number };
  /** API Gateway throttle for the route: steady requests per second and burst. */
  throttle: { rate: number; burst: number };
  lambda?: { memoryMb?: number; timeoutSeconds?: number; reservedConcurrency?: number };
}

export const DEFAULT_THROTTLE = { rate: 50, burst: 100 } as const;
