import { IdText, MAX_ID_LENGTH } from '../../schemas/common/fields';
import { NoActivePlanError, NotAMemberError } from '../organizations/errors';
import { lazyRetrying } from '../lazy';
import { roleSatisfies } from '../organizations/roles';
import { ForbiddenError, ValidationFailedError } from './errors';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

// Imported on the first request that needs it, not at init (issue 35: cold starts).
const memberships = lazyRetrying(() => import('../organizations/membership'));

/** Whether the route reads the `organization` header (declared by the contract, or the organization of its role rule). */
const readsOrganizationHeader = (route: RouteDefinition): boolean =>
  route.organizationHeader === 'required' || route.organization?.from === 'header';

/**
 * The `organization` header of a route that reads it: any text (the contract types it as a
 * string; one that names no organization of the caller is 403 below), present and at most
 * MAX_ID_LENGTH long (400 naming `headers.organization` otherwise).
 */
function organizationHeader(route: RouteDefinition, request: ApiRequest): string | undefined {
  if (!readsOrganizationHeader(route)) return undefined;
  const value = request.event.headers?.organization;
  if (!IdText.safeParse(value).success) {
    throw new ValidationFailedError([
      {
        path: 'headers.organization',
        message: value
          ? `Must be an organization id of at most ${MAX_ID_LENGTH} characters`
          : 'The organization header is required',
      },
    ]);
  }
  return value;
}

/** Whether the route has anything for `organizationContext` to do: a role rule, or the header to check. */
export const usesOrganizationContext = (route: RouteDefinition): boolean =>
  route.organization !== undefined || readsOrganizationHeader(route);

/**
 * Resolves the organization of the request (the `organization` header or the `orgId` path
 * parameter) and enforces the route's role rule and active-plan requirement: 403 when the caller
 * is not a member (an id that is not a UUID names no organization, so it is 403 too), lacks the
 * role, or the plan is inactive. A route with `self` lets any member act on themselves (the path's
 * user is the caller). Where a route reads the header besides its path (the members list), both
 * must name the same organization; a route that reads the header without a role rule (the
 * invitations list) still needs the caller to be a member of it.
 */
export function organizationContext(route: RouteDefinition): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    const { context } = request;
    const headerValue = organizationHeader(route, request);
    const { findMembership } = await memberships();
    const actor = context.api.actor;
    const rule = route.organization;
    if (!rule) {
      if (headerValue !== undefined && actor && !(await findMembership(headerValue, actor.user.id)))
        throw new NotAMemberError();
      return;
    }
    if (!actor) throw new Error(`Route ${route.operationId} checks organization roles but has no bearer auth`);
    const path = context.api.path as Record<string, string> | undefined;
    // Ids compare as UUIDs do: case-insensitively; the lowercase form is the one stored.
    const organizationId = (rule.from === 'header' ? headerValue! : path!.orgId!).toLowerCase();
    const membership = await findMembership(organizationId, actor.user.id);
    if (!membership) throw new NotAMemberError();
    if (rule.from === 'path' && headerValue !== undefined && headerValue.toLowerCase() !== organizationId) {
      throw new ForbiddenError('The organization header names another organization than the path');
    }
    const onSelf = rule.self !== undefined && path?.[rule.self]?.toLowerCase() === actor.user.id;
    if (!onSelf && !roleSatisfies(membership.role, rule.role)) {
      throw new ForbiddenError(`Your role (${membership.role}) may not do this`, 'INSUFFICIENT_ROLE');
    }
    if (!onSelf && rule.activePlan && !membership.planActive) {
      throw new NoActivePlanError();
    }
    context.api.organization = { id: organizationId, ...membership };
  };
  return { name: 'organizationContext', before };
}
