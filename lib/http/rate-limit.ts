import { consumeRateLimit } from '../rate-limit';
import { RateLimitedError } from './errors';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

/** The service's own per-minute limit of a route, per client IP and per signed-in user: 429 with Retry-After. */
export function rateLimit(route: RouteDefinition): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    if (!route.rateLimit) return;
    const { ip, actor } = request.context.api;
    const keys = [`${route.operationId}:ip:${ip}`];
    if (actor) keys.push(`${route.operationId}:user:${actor.user.id}`);
    const verdict = await consumeRateLimit(keys, route.rateLimit.perMinute);
    if (!verdict.allowed) throw new RateLimitedError(verdict.retryAfterSeconds);
  };
  return { name: 'rateLimit', before };
}
