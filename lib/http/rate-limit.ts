import { consumeRateLimit } from '../rate-limit';
import { RateLimitedError } from '../errors';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

/**
 * The service's own per-minute limit of a route: 429 with Retry-After. Counted per user on a
 * signed-in request (a firm's office shares one IP, so its people never share a limit) and per
 * client IP on an anonymous one: API Gateway's source IP, or behind the edge CloudFront's
 * CloudFront-Viewer-Address, trusted only once the origin check passed (lib/http/edge.ts); never
 * X-Forwarded-For, which a client can write.
 */
export function rateLimit(route: RouteDefinition): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    if (!route.rateLimit) return;
    const { ip, actor } = request.context.api;
    const key = actor ? `${route.operationId}:user:${actor.user.id}` : `${route.operationId}:ip:${ip}`;
    const verdict = await consumeRateLimit([{ key, limit: route.rateLimit.perMinute, windowSeconds: 60 }]);
    if (!verdict.allowed) throw new RateLimitedError(verdict.retryAfterSeconds);
  };
  return { name: 'rateLimit', before };
}
