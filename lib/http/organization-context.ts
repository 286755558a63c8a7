import { Id } from '../../schemas/common/fields';
import { findMembership } from '../organizations/membership';
import { roleSatisfies } from '../organizations/roles';
import { ForbiddenError, ValidationFailedError } from './errors';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

/**
 * Resolves the organization of the request (the `organization` header or the `orgId` path
 * parameter) and enforces the route's role rule and active-plan requirement: 403 when the caller
 * is not a member, lacks the role, or the plan is inactive. A route with `self` lets any member act
 * on themselves (the path's user is the caller).
 */
export function organizationContext(route: RouteDefinition): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    const { event, context } = request;
    const headerValue = event.headers?.organization;
    if ((route.organizationHeader === 'required' || route.organization?.from === 'header') && !Id.safeParse(headerValue).success) {
      throw new ValidationFailedError([
        { path: 'headers.organization', message: headerValue ? 'Must be an organization id' : 'The organization header is required' },
      ]);
    }
    const rule = route.organization;
    if (!rule) return;
    const actor = context.api.actor;
    if (!actor) throw new Error(`Route ${route.operationId} checks organization roles but has no bearer auth`);
    const organizationId = rule.from === 'header' ? headerValue! : (context.api.path as { orgId: string }).orgId;
    const membership = await findMembership(organizationId, actor.user.id);
    if (!membership) throw new ForbiddenError('You are not a member of this organization', 'NOT_A_MEMBER');
    const onSelf = rule.self !== undefined && (context.api.path as Record<string, string> | undefined)?.[rule.self] === actor.user.id;
    if (!onSelf && !roleSatisfies(membership.role, rule.role)) {
      throw new ForbiddenError(`Your role (${membership.role}) may not do this`, 'INSUFFICIENT_ROLE');
    }
    if (!onSelf && rule.activePlan && !membership.planActive) {
      throw new ForbiddenError('The organization has no active plan', 'NO_ACTIVE_PLAN');
    }
    context.api.organization = { id: organizationId, ...membership };
  };
  return { name: 'organizationContext', before };
}
