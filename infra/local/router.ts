import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { routeList } from '../../functions/routes';
import type { RouteDefinition } from '../../lib/http/route';
import { compileRoutePath } from './apigw-event';

export type LambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

const ROOT = resolve(import.meta.dirname, '../..');
// Literal segments win over parameters, as in API Gateway: /organization/invitations before /organization/{orgId}.
const compiled = routeList
  .map((route) => ({ route, ...compileRoutePath(route.path) }))
  .sort((a, b) => a.params.length - b.params.length);
/** Each route's handler, loaded on its first request: one entry per route of the table, no more. */
const handlers = new Map<string, Promise<LambdaHandler>>();
/**
 * Routes without parameters by `METHOD path`: a request for one is answered without trying every
 * pattern (the scan below would find the same entry, literal routes coming first).
 */
const literal = new Map<string, (typeof compiled)[number]>();
for (const entry of compiled) {
  const key = `${entry.route.method} ${entry.route.path}`;
  if (entry.params.length === 0 && !literal.has(key)) literal.set(key, entry);
}

export type RouteMatch =
  | { kind: 'found'; route: RouteDefinition; pathParameters: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'malformed-path' }
  | { kind: 'not-found' };

/** A path segment decoded, or null when its percent-encoding is malformed (`%E0%A4%A`, `%zz`). */
function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Finds the route-table entry for a method and path, as API Gateway does. */
export function matchRoute(method: string, pathname: string): RouteMatch {
  const exact = literal.get(`${method.toUpperCase()} ${pathname}`);
  if (exact) return { kind: 'found', route: exact.route, pathParameters: {} };
  const allowed: string[] = [];
  for (const entry of compiled) {
    const match = entry.pattern.exec(pathname);
    if (!match) continue;
    if (entry.route.method !== method.toUpperCase()) {
      allowed.push(entry.route.method);
      continue;
    }
    const pathParameters: Record<string, string> = {};
    for (const [index, name] of entry.params.entries()) {
      const value = decodeSegment(match[index + 1]!);
      if (value === null) return { kind: 'malformed-path' };
      pathParameters[name] = value;
    }
    return { kind: 'found', route: entry.route, pathParameters };
  }
  return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
}

/** Loads a route's handler module (the same file Lambda runs), once. */
export function loadHandler(route: RouteDefinition): Promise<LambdaHandler> {
  let handler = handlers.get(route.handler);
  if (!handler) {
    handler = import(pathToFileURL(resolve(ROOT, route.handler)).href).then(
      (module: { handler: LambdaHandler }) => module.handler,
    );
    handlers.set(route.handler, handler);
  }
  return handler;
}
