import { RateLimitedError } from '../errors';
import { lazyRetrying } from '../lazy';
import { addressGroup } from '../rate-limit/address-group';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

// Imported on the first request that needs it, not at init (issue 35: cold starts).
const limits = lazyRetrying(() => import('../rate-limit'));

/**
 * The service's own per-minute limit of a route: 429 with Retry-After. Counted per user on a
 * signed-in request (a firm's office shares one IP, so its people never share a limit) and per
 * client address on an anonymous one (IPv6 by its /64, `addressGroup`): API Gateway's source IP,
 * or behind the edge CloudFront's CloudFront-Viewer-Address, trusted only once the origin check
 * passed (lib/http/edge.ts); never X-Forwarded-For, which a client can write. Routes naming one
 * `shared` group count against one allowance (the enumeration routes: one client may not ask 10
 * times on each of them).
 */
export function rateLimit(route: RouteDefinition): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    if (!route.rateLimit) return;
    const { ip, actor } = request.context.api;
    const counter = route.rateLimit.shared ?? route.operationId;
    const key = actor ? `${counter}:user:${actor.user.id}` : `${counter}:ip:${addressGroup(ip)}`;
    const { consumeRateLimit } = await limits();
    const verdict = await consumeRateLimit([{ key, limit: route.rateLimit.perMinute, windowSeconds: 60 }]);
    if (!verdict.allowed) throw new RateLimitedError(verdict.retryAfterSeconds);
  };
  return { name: 'rateLimit', before };
}
