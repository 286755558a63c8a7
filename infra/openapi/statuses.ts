import type { RouteDefinition } from '../../lib/http/route';
import type { RequestSchemas } from '../../lib/http/validate';

/** The error statuses an operation can be described with (each has one response in the document). */
export const ERROR_STATUSES = [400, 401, 403, 404, 409, 429, 500] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

/**
 * The error statuses the contract (and docs/decisions.md where the contract is silent) names per
 * operation, beyond those every route of its kind can answer (see `derivedErrorStatuses`).
 * Keyed by operation id; an operation missing here gets a guess from its route (`guessedStatuses`).
 */
export const CONTRACT_ERROR_STATUSES: Readonly<Record<string, readonly ErrorStatus[]>> = {
  // Authentication and tokens
  login: [401, 429],
  generateToken: [400, 401, 403],
  listTokens: [],
  revokeToken: [404],
  updateTokenScopes: [400, 403, 404],
  listSessions: [],
  endSession: [404],
  refreshToken: [400, 404],
  logout: [],
  register: [400],
  sendForgotPasswordLink: [],
  resetPassword: [],
  checkEmailAvailability: [],
  // User
  getProfile: [],
  updateProfile: [],
  changePassword: [400],
  verifyEmail: [400, 404],
  resendVerificationEmail: [400],
  // Organizations
  createOrganization: [400],
  listInvitations: [403],
  validateOrganizationName: [],
  listPendingInvitations: [],
  getOrganization: [403],
  updateOrganization: [400, 403],
  getOrganizationBySlug: [403],
  getOrganizationUsage: [400, 403],
  getStorageStats: [403],
  listMyOrganizations: [],
  listMembers: [403],
  inviteUsers: [401, 403, 404],
  deleteInvitation: [400, 403, 404],
  resendInvitation: [400, 403, 404],
  acceptInvitation: [400, 403, 404],
  rejectInvitation: [400, 404],
  updateUserRoles: [400, 403],
  updateOrganizationUsers: [400, 403, 404],
  removeOrganizationUser: [400, 403, 404],
  // Billing
  upgradeCaseToPro: [403, 404, 409],
  createBillingSetupSession: [403, 409],
  selectPlan: [400, 403, 409],
  getCaseStatement: [403, 404],
  getReconciliation: [403],
  listBillingHistory: [403],
  listPlans: [403],
  getCurrentPlan: [403],
  getCredits: [403],
  createBillingReport: [400, 404],
  stripeWebhook: [400, 404],
  // Cases (extension) and case material
  createCase: [403],
  listCases: [403],
  getCase: [403, 404],
  updateCase: [400, 403, 404],
  deleteCase: [403, 404],
  grantCaseAccess: [403, 404],
  revokeCaseAccess: [400, 403, 404],
  listEmailThreads: [403, 404],
  listThreadEmails: [400, 403, 404],
  searchNetworkMessages: [403, 404],
  listNetworkProfiles: [403, 404],
  listChatProfiles: [403, 404],
  listSupportTickets: [403, 404],
  importCaseNotes: [400, 403, 404],
  // Administration
  getOrganizationReport: [403],
};

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
 * when it has the service's own rate limit; 500 always.
 */
export function derivedErrorStatuses(route: RouteDefinition, schemas: RequestSchemas): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>([500]);
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

/** For an operation the contract map does not know yet: a path that names a resource id may answer 404. */
export function guessedStatuses(route: RouteDefinition): ErrorStatus[] {
  return pathParameterNames(route.path).some((name) => name !== 'orgId') ? [404] : [];
}

/** Every error status the document declares for the operation, ascending. */
export function errorStatuses(route: RouteDefinition, schemas: RequestSchemas): ErrorStatus[] {
  const named = CONTRACT_ERROR_STATUSES[route.operationId] ?? guessedStatuses(route);
  return [...new Set([...derivedErrorStatuses(route, schemas), ...named])].sort((a, b) => a - b);
}
