import { takesIdempotencyKey } from '../../lib/http/idempotency';
import type { ErrorStatus, RouteDefinition } from '../../lib/http/route';
import type { RequestSchemas } from '../../lib/http/validate';

const PATH_PARAMETER = /\{([A-Za-z0-9_]+)\}/g;

/** Names of the path parameters of a route template: /a/{orgId}/b/{id} -> ['orgId', 'id']. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(PATH_PARAMETER)].map((m) => m[1]!);
}

/** True when the route reads an `organization` header (checked by the middleware: 400 when missing). */
export function takesOrganizationHeader(route: RouteDefinition): boolean {
  return route.organizationHeader === 'required' || route.organization?.from === 'header';
}

/**
 * What every route of its kind can answer, read from the route entry and its schemas (the
 * middleware order in lib/http/endpoint.ts decides these, not the handler):
 * 400 when it validates input (body, query, path or the organization header) or parses a JSON body;
 * 401 and 403 when it needs a bearer token (a scoped automation token without the route's scope is
 * 403, and so is every automation token on a route without a scope; role rules and super-admin
 * routes are 403 too); 403 and 404 when it acts on one case (its case rule, an unknown case); 429
 * when it has the service's own rate limit; 409 on every write (POST, PATCH, DELETE: its
 * `Idempotency-Key` reused or in use, lib/http/idempotency.ts); 500 and 503 (the database or the
 * processor briefly down, with Retry-After) always.
 */
export function derivedErrorStatuses(route: RouteDefinition, schemas: RequestSchemas): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>([500, 503]);
  if (takesIdempotencyKey(route)) statuses.add(409);
  if (schemas.body || schemas.query || schemas.path || takesOrganizationHeader(route)) statuses.add(400);
  if (route.auth === 'bearer') {
    statuses.add(401);
    statuses.add(403);
  }
  if (route.organization || route.superAdmin) statuses.add(403);
  if (route.rateLimit) statuses.add(429);
  // A route that acts on one case answers 404 for an unknown or deleted case, 403 by its case rule.
  if (route.case) {
    statuses.add(403);
    statuses.add(404);
  }
  return [...statuses];
}

/** Every error status the document declares for the operation: those its rules imply and its entry's `errors`, ascending. */
export function errorStatuses(route: RouteDefinition, schemas: RequestSchemas): ErrorStatus[] {
  return [...new Set([...derivedErrorStatuses(route, schemas), ...(route.errors ?? [])])].sort((a, b) => a - b);
}

/**
 * Statuses answered before any handler runs, by the local server (infra/local/app.ts, in the error
 * envelope) and in the cloud by API Gateway or CloudFront: a method the path does not have (405),
 * a body over the size limit (413, only where a body is read), a request target too long (414),
 * headers too large (431).
 */
export const EDGE_STATUSES = [405, 413, 414, 431] as const;
export type EdgeStatus = (typeof EDGE_STATUSES)[number];

export function edgeStatuses(route: RouteDefinition, schemas: RequestSchemas): EdgeStatus[] {
  return schemas.body || route.rawBody ? [405, 413, 414, 431] : [405, 414, 431];
}
