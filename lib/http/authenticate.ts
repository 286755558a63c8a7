import { lazyRetrying } from '../lazy';
import { ForbiddenError, UnauthenticatedError } from './errors';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

// Imported on the first request that needs it, not at init (issue 35: cold starts).
const sessions = lazyRetrying(() => import('../auth/sessions'));

/**
 * Bearer auth for protected routes: access token (JWT of a live session), automation token or
 * legacy token; 401 UNAUTHENTICATED otherwise. A scoped token must hold the route's scope (403),
 * and routes without a scope are for full sessions only.
 */
export function authenticate(route: RouteDefinition): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    if (route.auth === 'none') return;
    const header = request.event.headers?.authorization ?? '';
    const match = /^Bearer\s+(\S{1,4096})\s*$/i.exec(header);
    if (!match) throw new UnauthenticatedError();
    const { authenticateBearer } = await sessions();
    const actor = await authenticateBearer(match[1]!);
    if (actor.session.kind === 'automation' && (route.scope === null || !actor.session.scopes?.includes(route.scope))) {
      throw new ForbiddenError(
        route.scope ? `This token lacks the ${route.scope} scope` : 'Automation tokens cannot call this route',
        'INSUFFICIENT_SCOPE',
      );
    }
    if (route.superAdmin && !actor.user.isSuperAdmin) throw new ForbiddenError('Super admins only');
    request.context.api.actor = actor;
  };
  return { name: 'authenticate', before };
}
