import { lazyRetrying } from '../lazy';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

// Imported on the first request that needs it, not at init (issue 35: cold starts).
const access = lazyRetrying(() => import('../cases/access'));

const asRecord = (value: unknown) => (value ?? {}) as Record<string, unknown>;

/**
 * Resolves the case of a route with a case rule (`case` on its entry) and enforces the rule before
 * the handler runs: the case id comes from the path, or from the query where the route takes it
 * there (device-note import, attachment uploads). An unknown, deleted or non-UUID case is 404; a
 * case of another organization than the request's (the header) is 403; so is a caller without
 * access to the case or whose access the rule refuses. A rule with `self` lets anyone with access
 * act on themselves (the path's user is the caller), as when giving up one's own access. The
 * handler gets the case, the caller's access and organization role as `caseContext`.
 */
export function caseContext(route: RouteDefinition): ApiMiddleware {
  const rule = route.case;
  const before = async (request: ApiRequest) => {
    if (!rule) return;
    const { api } = request.context;
    if (!api.actor) throw new Error(`Route ${route.operationId} has a case rule but no bearer auth`);
    const path = asRecord(api.path);
    const caseId = path.caseId ?? asRecord(api.query).caseId;
    if (typeof caseId !== 'string') throw new Error(`Route ${route.operationId} has a case rule but no caseId`);
    const { assertCaseRule, caseWithAccess } = await access();
    const found = await caseWithAccess(caseId, api.actor.user.id, api.organization?.id);
    const self = rule.self === undefined ? undefined : path[rule.self];
    const onSelf = typeof self === 'string' && self.toLowerCase() === api.actor.user.id;
    if (!onSelf) assertCaseRule(found, rule);
    api.caseContext = found;
  };
  return { name: 'caseContext', before };
}
