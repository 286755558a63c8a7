import { CASE_RULES } from '../lib/cases/rules';
import { namedRoute, type RouteDefinition } from '../lib/http/route';

// The case rules as plain names: an entry that reads a property of CASE_RULES could not be left out
// of a bundle (esbuild keeps a property read, it may have side effects).
const {
  billing: caseBilling,
  custody: caseCustody,
  delete: caseDelete,
  import: caseImport,
  manage: caseManage,
  read: caseRead,
  review: caseReview,
  upload: caseUpload,
} = CASE_RULES;

/*
 * THE route table: every route once, each entry its own export, gathered in `routes` at the end.
 * Read by the local server, infra, the OpenAPI generator and the tests; a handler imports the
 * module as a namespace (`import * as routes`) and reads its own entry, so its bundle keeps only
 * that entry (issue 35: cold starts; every entry is a pure call). Nothing else lists routes.
 *
 * An entry states only what differs from the defaults of `namedRoute` (lib/http/route.ts): its name
 * is the operation id, the handler is functions/<area>/<kebab-case name>.ts, no scope (full
 * sessions only), not internal, 200, the default throttle, and no error statuses beyond those the
 * entry's own rules imply. `errors` lists the others the contract names.
 */

// Authentication and tokens
export const login = /* @__PURE__ */ namedRoute('login', 'auth', {
  method: 'POST',
  path: '/auth/login',
  summary:
    'Sign in with email and password (failed sign-ins: at most 10 per account per client address and 100 per client address in 15 minutes, and per account from all addresses 20 a quarter hour, 40 an hour, 80 a day, then 429; an address the account signed in from before is held only by its own 10)',
  auth: 'none',
  credential: true,
  throttle: { rate: 20, burst: 40 },
  errors: [401, 429],
  audit: { action: 'auth.signed_in' },
});
export const generateToken = /* @__PURE__ */ namedRoute('generateToken', 'auth', {
  method: 'POST',
  path: '/auth/generate-token',
  summary: 'Mint a scoped automation token or a legacy full-access token',
  auth: 'bearer',
  credential: true,
  throttle: { rate: 5, burst: 10 },
  errors: [400, 401, 403],
  audit: { action: 'auth.token.created' },
});
export const listTokens = /* @__PURE__ */ namedRoute('listTokens', 'auth', {
  method: 'GET',
  path: '/auth/tokens',
  summary: "List the caller's automation tokens",
  auth: 'bearer',
});
export const revokeToken = /* @__PURE__ */ namedRoute('revokeToken', 'auth', {
  method: 'DELETE',
  path: '/auth/tokens/{id}',
  summary: 'Revoke an automation token',
  auth: 'bearer',
  successStatus: 204,
  errors: [404],
  audit: { action: 'auth.token.revoked' },
});
export const updateTokenScopes = /* @__PURE__ */ namedRoute('updateTokenScopes', 'auth', {
  method: 'PATCH',
  path: '/auth/tokens/{id}/scopes',
  summary: "Replace an automation token's scopes",
  auth: 'bearer',
  errors: [400, 403, 404],
  audit: { action: 'auth.token.scopes_changed' },
});
export const listSessions = /* @__PURE__ */ namedRoute('listSessions', 'auth', {
  method: 'GET',
  path: '/auth/sessions',
  summary: "List the caller's sign-in sessions and legacy tokens (never their values)",
  auth: 'bearer',
  extension: true,
});
export const endSession = /* @__PURE__ */ namedRoute('endSession', 'auth', {
  method: 'DELETE',
  path: '/auth/sessions/{id}',
  summary: "End one of the caller's sign-in sessions or legacy tokens",
  auth: 'bearer',
  extension: true,
  successStatus: 204,
  errors: [404],
  audit: { action: 'auth.session.ended' },
});
export const refreshToken = /* @__PURE__ */ namedRoute('refreshToken', 'auth', {
  method: 'POST',
  path: '/auth/refresh',
  summary: 'Get a new access token for a refresh token',
  auth: 'none',
  credential: true,
  errors: [400, 404],
  audit: { action: 'auth.session.refreshed' },
});
export const logout = /* @__PURE__ */ namedRoute('logout', 'auth', {
  method: 'POST',
  path: '/auth/logout',
  summary: 'End the session of the bearer token',
  auth: 'bearer',
  audit: { action: 'auth.signed_out' },
});
export const register = /* @__PURE__ */ namedRoute('register', 'auth', {
  method: 'POST',
  path: '/auth/register',
  summary: 'Create an account (and its organization) and sign in',
  auth: 'none',
  credential: true,
  rateLimit: { perMinute: 10, shared: 'enumeration' },
  throttle: { rate: 5, burst: 10 },
  errors: [400],
  audit: { action: 'user.registered' },
});
export const sendForgotPasswordLink = /* @__PURE__ */ namedRoute('sendForgotPasswordLink', 'auth', {
  method: 'POST',
  path: '/auth/send-forgot-password-link',
  summary: 'Email a password reset link (always 200; at most 3 links per address per hour)',
  auth: 'none',
  rateLimit: { perMinute: 10, shared: 'enumeration' },
  throttle: { rate: 5, burst: 10 },
  audit: { action: 'user.password_reset.requested' },
});
export const resetPassword = /* @__PURE__ */ namedRoute('resetPassword', 'auth', {
  method: 'POST',
  path: '/auth/reset-password',
  summary:
    'Set a new password with an emailed reset token; ends every sign-in session, legacy token and automation token of the account',
  auth: 'none',
  credential: true,
  throttle: { rate: 5, burst: 10 },
  audit: { action: 'user.password.reset' },
});
export const checkEmailAvailability = /* @__PURE__ */ namedRoute('checkEmailAvailability', 'auth', {
  method: 'POST',
  path: '/auth/check-email-availability',
  summary: 'Tell whether an email is free to register',
  auth: 'none',
  rateLimit: { perMinute: 10, shared: 'enumeration' },
  throttle: { rate: 10 / 60, burst: 10 },
  audit: { none: 'changes nothing: answers whether an address is free' },
});

// User
export const getProfile = /* @__PURE__ */ namedRoute('getProfile', 'user', {
  method: 'GET',
  path: '/user/profile',
  summary: "The caller's profile with every organization",
  auth: 'bearer',
  scope: 'profile:read',
});
export const updateProfile = /* @__PURE__ */ namedRoute('updateProfile', 'user', {
  method: 'PATCH',
  path: '/user/profile',
  summary: "Update the caller's profile",
  auth: 'bearer',
  scope: 'profile:write',
  audit: { action: 'user.profile.updated' },
});
export const changePassword = /* @__PURE__ */ namedRoute('changePassword', 'user', {
  method: 'POST',
  path: '/user/change-password',
  summary:
    "Change the caller's password; ends every other sign-in session and every legacy token (scoped automation tokens survive: listed and revocable at /auth/tokens)",
  auth: 'bearer',
  credential: true,
  throttle: { rate: 5, burst: 10 },
  errors: [400],
  audit: { action: 'user.password.changed' },
});
export const verifyEmail = /* @__PURE__ */ namedRoute('verifyEmail', 'user', {
  method: 'POST',
  path: '/user/verify-email',
  summary: 'Verify an email address with the emailed token',
  auth: 'none',
  errors: [400, 404],
  audit: { action: 'user.email.verified' },
});
export const resendVerificationEmail = /* @__PURE__ */ namedRoute('resendVerificationEmail', 'user', {
  method: 'POST',
  path: '/user/resend-verification-email',
  summary: 'Send a new email verification link to the caller',
  auth: 'bearer',
  rateLimit: { perMinute: 3 },
  internal: true,
  throttle: { rate: 3 / 60, burst: 3 },
  errors: [400],
  audit: { action: 'user.verification_email.sent' },
});

// Organizations
export const createOrganization = /* @__PURE__ */ namedRoute('createOrganization', 'organization', {
  method: 'POST',
  path: '/organization',
  summary: 'Create an organization with the caller as owner',
  auth: 'bearer',
  scope: 'organization:write',
  successStatus: 201,
  throttle: { rate: 5, burst: 10 },
  errors: [400],
  audit: { action: 'organization.created' },
});
export const listInvitations = /* @__PURE__ */ namedRoute('listInvitations', 'organization', {
  method: 'GET',
  path: '/organization/invitations',
  summary: "Invitations of the caller's organizations",
  auth: 'bearer',
  scope: 'organization:read',
  organizationHeader: 'required',
  errors: [403],
});
export const validateOrganizationName = /* @__PURE__ */ namedRoute('validateOrganizationName', 'organization', {
  method: 'POST',
  path: '/organization/validate-name',
  summary: 'Tell whether an organization name is free',
  auth: 'none',
  organizationHeader: 'required',
  internal: true,
  throttle: { rate: 5, burst: 10 },
  audit: { none: 'changes nothing: answers whether a name is free' },
});
export const listPendingInvitations = /* @__PURE__ */ namedRoute('listPendingInvitations', 'organization', {
  method: 'GET',
  path: '/organization/pending-invitations',
  summary: "The caller's own pending invitations (none until the caller's address is verified)",
  auth: 'bearer',
  scope: 'organization:read',
  internal: true,
});
export const getOrganization = /* @__PURE__ */ namedRoute('getOrganization', 'organization', {
  method: 'GET',
  path: '/organization/{orgId}',
  summary: 'Organization details',
  auth: 'bearer',
  scope: 'organization:read',
  organization: { from: 'path', role: 'any-role' },
  errors: [403],
});
export const updateOrganization = /* @__PURE__ */ namedRoute('updateOrganization', 'organization', {
  method: 'PATCH',
  path: '/organization/{orgId}',
  summary: 'Update the organization',
  auth: 'bearer',
  scope: 'organization:write',
  organization: { from: 'path', role: 'admin-or-owner', activePlan: true },
  successStatus: 201,
  errors: [400, 403],
  audit: { action: 'organization.updated' },
});
export const getOrganizationBySlug = /* @__PURE__ */ namedRoute('getOrganizationBySlug', 'organization', {
  method: 'GET',
  path: '/organization/slug/{slug}',
  summary: 'Organization details by slug',
  auth: 'bearer',
  scope: 'organization:read',
  internal: true,
  errors: [403],
});
export const getOrganizationUsage = /* @__PURE__ */ namedRoute('getOrganizationUsage', 'organization', {
  method: 'GET',
  path: '/organization/{orgId}/usages-stat',
  summary: "The organization's plan usage",
  auth: 'bearer',
  scope: 'organization:read',
  organization: { from: 'path', role: 'any-role' },
  internal: true,
  errors: [400, 403],
});
export const getStorageStats = /* @__PURE__ */ namedRoute('getStorageStats', 'organization', {
  method: 'GET',
  path: '/organization/{orgId}/storage-stats',
  summary: 'Storage used by live cases, largest first',
  auth: 'bearer',
  scope: 'organization:read',
  organization: { from: 'path', role: 'any-role' },
  errors: [403],
});
export const listMyOrganizations = /* @__PURE__ */ namedRoute('listMyOrganizations', 'organization', {
  method: 'GET',
  path: '/organization/user/organizations',
  summary: 'Every organization of the caller',
  auth: 'bearer',
  scope: 'organization:read',
});
export const listMembers = /* @__PURE__ */ namedRoute('listMembers', 'organization', {
  method: 'GET',
  path: '/organization/{orgId}/members',
  summary: 'Members of the organization',
  auth: 'bearer',
  scope: 'organization:read',
  organization: { from: 'path', role: 'any-role' },
  organizationHeader: 'required',
  errors: [403],
});
export const inviteUsers = /* @__PURE__ */ namedRoute('inviteUsers', 'organization', {
  method: 'POST',
  path: '/organization/{orgId}/invite',
  summary: 'Invite people to the organization',
  auth: 'bearer',
  scope: 'members:write',
  organization: { from: 'path', role: 'member-or-above', activePlan: true },
  successStatus: 201,
  throttle: { rate: 5, burst: 10 },
  errors: [401, 403, 404],
  audit: { action: 'organization.member.invited' },
});
export const deleteInvitation = /* @__PURE__ */ namedRoute('deleteInvitation', 'organization', {
  method: 'DELETE',
  path: '/organization/{orgId}/invitation/{invitationId}',
  summary: 'Delete a pending invitation',
  auth: 'bearer',
  scope: 'members:write',
  organization: { from: 'path', role: 'member-or-above', activePlan: true },
  errors: [400, 403, 404],
  audit: { action: 'organization.invitation.deleted' },
});
export const resendInvitation = /* @__PURE__ */ namedRoute('resendInvitation', 'organization', {
  method: 'POST',
  path: '/organization/{orgId}/invitation/{invitationId}/resend',
  summary: 'Send an invitation again with a new token',
  auth: 'bearer',
  scope: 'members:write',
  organization: { from: 'path', role: 'member-or-above', activePlan: true },
  successStatus: 201,
  throttle: { rate: 5, burst: 10 },
  errors: [400, 403, 404],
  audit: { action: 'organization.invitation.resent' },
});
export const acceptInvitation = /* @__PURE__ */ namedRoute('acceptInvitation', 'organization', {
  method: 'POST',
  path: '/organization/{orgId}/invitation/accept',
  summary:
    'Accept an invitation with the emailed token; an unverified account of the address is taken over (name and password required, signed in, its earlier sessions, memberships and pending invitations ended)',
  auth: 'none',
  credential: true,
  successStatus: 201,
  throttle: { rate: 5, burst: 10 },
  errors: [400, 403, 404],
  audit: { action: 'organization.member.joined' },
});
export const rejectInvitation = /* @__PURE__ */ namedRoute('rejectInvitation', 'organization', {
  method: 'POST',
  path: '/organization/{orgId}/invitation/reject',
  summary: 'Reject an invitation with the emailed token',
  auth: 'none',
  envelope: 'no-data',
  internal: true,
  throttle: { rate: 5, burst: 10 },
  errors: [400, 404],
  audit: { action: 'organization.invitation.rejected' },
});
export const listAuditEvents = /* @__PURE__ */ namedRoute('listAuditEvents', 'organization', {
  method: 'GET',
  path: '/organization/{orgId}/audit-events',
  summary: "The organization's audit trail, newest first (org admin or owner)",
  auth: 'bearer',
  scope: 'audit:read',
  organization: { from: 'path', role: 'admin-or-owner' },
  extension: true,
  errors: [400, 403],
});
export const verifyAuditChain = /* @__PURE__ */ namedRoute('verifyAuditChain', 'organization', {
  method: 'GET',
  path: '/organization/{orgId}/audit-events/verify',
  summary:
    "Check the organization's audit hash chain since its last checkpoint and say whether it is intact (org admin or owner)",
  auth: 'bearer',
  scope: 'audit:read',
  organization: { from: 'path', role: 'admin-or-owner' },
  extension: true,
  errors: [403],
});
export const updateUserRoles = /* @__PURE__ */ namedRoute('updateUserRoles', 'organization', {
  method: 'PATCH',
  path: '/organization/{orgId}/update-user-role',
  summary: 'Set the role of several members',
  auth: 'bearer',
  scope: 'members:write',
  organization: { from: 'path', role: 'admin-or-owner', activePlan: true },
  internal: true,
  errors: [400, 403],
  audit: { action: 'organization.member.role_changed' },
});
export const updateOrganizationUsers = /* @__PURE__ */ namedRoute('updateOrganizationUsers', 'organization', {
  method: 'PATCH',
  path: '/organization/{orgId}/user',
  summary: "Change members' roles, names or emails, all or nothing",
  auth: 'bearer',
  scope: 'members:write',
  organization: { from: 'path', role: 'admin-or-owner', activePlan: true },
  errors: [400, 403, 404],
  audit: { action: 'organization.member.updated' },
});
export const removeOrganizationUser = /* @__PURE__ */ namedRoute('removeOrganizationUser', 'organization', {
  method: 'DELETE',
  path: '/organization/{orgId}/user/{userId}',
  summary:
    'Remove a member from the organization (any member may remove themselves, except the last owner); cases the member alone owned go to an owner',
  auth: 'bearer',
  scope: 'members:write',
  organization: { from: 'path', role: 'admin-or-owner', activePlan: true, self: 'userId' },
  errors: [400, 403, 404],
  audit: { action: 'organization.member.removed' },
});

// Billing
export const upgradeCaseToPro = /* @__PURE__ */ namedRoute('upgradeCaseToPro', 'cases', {
  method: 'POST',
  path: '/cases/{caseId}/pro-upgrade',
  summary: 'Upgrade a case to Pro (one-time charge)',
  auth: 'bearer',
  scope: 'billing:write',
  organization: { from: 'header', role: 'member-or-above', activePlan: true },
  case: caseBilling,
  throttle: { rate: 5, burst: 50 },
  errors: [403, 404, 409],
  audit: { action: 'case.pro_upgrade.requested' },
});
export const createBillingSetupSession = /* @__PURE__ */ namedRoute('createBillingSetupSession', 'billing', {
  method: 'POST',
  path: '/billing/setup-session',
  handler: 'functions/billing/create-setup-session.ts',
  summary: 'Start a card set-up (checkout in setup mode)',
  auth: 'bearer',
  scope: 'billing:write',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  throttle: { rate: 5, burst: 10 },
  // 503 PAYMENTS_NOT_CONFIGURED too (derived for every route, listed for the ones that need the processor).
  errors: [403, 409, 503],
  audit: { action: 'billing.setup_session.created' },
});
export const selectPlan = /* @__PURE__ */ namedRoute('selectPlan', 'billing', {
  method: 'POST',
  path: '/billing/plan',
  summary: 'Select or change the self-serve tier',
  auth: 'bearer',
  scope: 'billing:write',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  throttle: { rate: 5, burst: 10 },
  errors: [400, 403, 409, 503],
  audit: { action: 'billing.plan.selected' },
});
export const getCaseStatement = /* @__PURE__ */ namedRoute('getCaseStatement', 'cases', {
  method: 'GET',
  path: '/cases/{caseId}/billing/statement',
  summary: "A case's billing rows and totals",
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'member-or-above' },
  case: caseBilling,
  errors: [403, 404],
});
export const getReconciliation = /* @__PURE__ */ namedRoute('getReconciliation', 'billing', {
  method: 'GET',
  path: '/billing/reconciliation',
  summary: "The organization's billing rows grouped by case",
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  errors: [403],
});
export const listBillingHistory = /* @__PURE__ */ namedRoute('listBillingHistory', 'billing', {
  method: 'GET',
  path: '/billing/history',
  summary: 'Audit trail of billing changes',
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  internal: true,
  errors: [403],
});
export const listPlans = /* @__PURE__ */ namedRoute('listPlans', 'billing', {
  method: 'GET',
  path: '/billing/plans',
  summary: 'The self-serve tier catalog',
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  errors: [403],
});
export const getCurrentPlan = /* @__PURE__ */ namedRoute('getCurrentPlan', 'billing', {
  method: 'GET',
  path: '/billing/plan/current',
  summary: "The organization's plan and usage",
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  errors: [403],
});
export const getCredits = /* @__PURE__ */ namedRoute('getCredits', 'billing', {
  method: 'GET',
  path: '/billing/credits',
  summary: 'Credit balance and ledger',
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  errors: [403],
});
export const createBillingReport = /* @__PURE__ */ namedRoute('createBillingReport', 'billing', {
  method: 'POST',
  path: '/billing/report',
  summary: 'Billing report as JSON or PDF',
  auth: 'bearer',
  scope: 'billing:read',
  organization: { from: 'header', role: 'admin-owner-or-billing' },
  // API Gateway answers 503 after 29 s, so the function must finish within that. A 50,000-row
  // report peaks near 210 MB (test/bench/README.md); 768 rather than 512 MB because Lambda's CPU
  // share follows memory: the largest JSON report takes about 1 s at 768 MB, 1.5 s at 512 MB.
  lambda: { memoryMb: 768, timeoutSeconds: 29 },
  internal: true,
  throttle: { rate: 2, burst: 5 },
  errors: [400, 404],
  audit: { action: 'billing.report.created' },
});
export const stripeWebhook = /* @__PURE__ */ namedRoute('stripeWebhook', 'webhooks', {
  method: 'POST',
  path: '/webhooks/stripe',
  summary: 'Stripe events (signature verified)',
  auth: 'none',
  extension: true,
  rawBody: true,
  throttle: { rate: 50, burst: 200 },
  errors: [400, 404, 503],
  audit: { action: 'billing.processor_event.received' },
});

// Cases (extension) and case material
export const createCase = /* @__PURE__ */ namedRoute('createCase', 'cases', {
  method: 'POST',
  path: '/cases',
  summary: 'Open a case in the organization of the header',
  auth: 'bearer',
  scope: 'cases:write',
  organization: { from: 'header', role: 'member-or-above', activePlan: true },
  extension: true,
  successStatus: 201,
  errors: [403],
  audit: { action: 'case.created' },
});
export const listCases = /* @__PURE__ */ namedRoute('listCases', 'cases', {
  method: 'GET',
  path: '/cases',
  summary: 'Cases the caller has access to',
  auth: 'bearer',
  scope: 'cases:read',
  organization: { from: 'header', role: 'any-role' },
  extension: true,
  errors: [403],
});
export const getCase = /* @__PURE__ */ namedRoute('getCase', 'cases', {
  method: 'GET',
  path: '/cases/{caseId}',
  summary: 'One case',
  auth: 'bearer',
  scope: 'cases:read',
  organization: { from: 'header', role: 'any-role' },
  case: caseRead,
  extension: true,
  errors: [403, 404],
});
export const updateCase = /* @__PURE__ */ namedRoute('updateCase', 'cases', {
  method: 'PATCH',
  path: '/cases/{caseId}',
  summary: 'Rename, archive or restore a case',
  auth: 'bearer',
  scope: 'cases:write',
  organization: { from: 'header', role: 'any-role' },
  case: caseManage,
  extension: true,
  errors: [400, 403, 404],
  audit: { action: 'case.updated' },
});
export const deleteCase = /* @__PURE__ */ namedRoute('deleteCase', 'cases', {
  method: 'DELETE',
  path: '/cases/{caseId}',
  summary: 'Delete a case (soft)',
  auth: 'bearer',
  scope: 'cases:write',
  organization: { from: 'header', role: 'any-role' },
  case: caseDelete,
  extension: true,
  errors: [403, 404],
  audit: { action: 'case.deleted' },
});
export const grantCaseAccess = /* @__PURE__ */ namedRoute('grantCaseAccess', 'cases', {
  method: 'PUT',
  path: '/cases/{caseId}/access/{userId}',
  summary: 'Grant or change case access of a member',
  auth: 'bearer',
  scope: 'cases:write',
  organization: { from: 'header', role: 'any-role' },
  case: caseManage,
  extension: true,
  errors: [403, 404],
  audit: { action: 'case.access.granted' },
});
export const revokeCaseAccess = /* @__PURE__ */ namedRoute('revokeCaseAccess', 'cases', {
  method: 'DELETE',
  path: '/cases/{caseId}/access/{userId}',
  summary: 'Revoke case access',
  auth: 'bearer',
  scope: 'cases:write',
  organization: { from: 'header', role: 'any-role' },
  case: { ...caseManage, self: 'userId' },
  extension: true,
  errors: [400, 403, 404],
  audit: { action: 'case.access.revoked' },
});
export const listEmailThreads = /* @__PURE__ */ namedRoute('listEmailThreads', 'material', {
  method: 'GET',
  path: '/local-emails/{caseId}/threads',
  summary: "The case's email threads, latest activity first",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  extension: true,
  errors: [403, 404],
  audit: { action: 'evidence.email_threads.read', read: true },
});
export const listThreadEmails = /* @__PURE__ */ namedRoute('listThreadEmails', 'material', {
  method: 'GET',
  path: '/local-emails/{caseId}/threads/{threadId}/emails',
  summary: 'Emails of one thread, filtered',
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  errors: [400, 403, 404],
  audit: { action: 'evidence.thread_emails.read', read: true },
});
export const searchNetworkMessages = /* @__PURE__ */ namedRoute('searchNetworkMessages', 'material', {
  method: 'GET',
  path: '/professional-network/{caseId}/search-messages',
  summary: "Search the case's professional-network messages",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  errors: [403, 404],
  audit: { action: 'evidence.network_messages.searched', read: true },
});
export const listNetworkProfiles = /* @__PURE__ */ namedRoute('listNetworkProfiles', 'material', {
  method: 'GET',
  path: '/professional-network/{caseId}/profiles',
  summary: "The case's professional-network profiles",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  extension: true,
  errors: [403, 404],
});
export const listChatProfiles = /* @__PURE__ */ namedRoute('listChatProfiles', 'material', {
  method: 'GET',
  path: '/chat-platform/{caseId}/profiles',
  summary: "The case's chat-platform profiles",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  extension: true,
  errors: [403, 404],
});
export const listSupportTickets = /* @__PURE__ */ namedRoute('listSupportTickets', 'material', {
  method: 'GET',
  path: '/chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets',
  summary: "A chat-platform profile's support tickets",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  errors: [403, 404],
  audit: { action: 'evidence.support_tickets.read', read: true },
});
export const getCaseCustody = /* @__PURE__ */ namedRoute('getCaseCustody', 'cases', {
  method: 'GET',
  path: '/cases/{caseId}/custody',
  summary:
    "The case's chain of custody a page at a time (evidence items with their hashes, its audit events, each behind a cursor; the counts and the chain head), or a stored PDF of a small case",
  auth: 'bearer',
  scope: 'material:read',
  case: caseCustody,
  extension: true,
  lambda: { memoryMb: 1024, timeoutSeconds: 30 },
  errors: [400, 403, 404, 409],
  audit: { action: 'evidence.custody.read', read: true },
});
export const startCustodyExport = /* @__PURE__ */ namedRoute('startCustodyExport', 'cases', {
  method: 'POST',
  path: '/cases/{caseId}/custody/exports',
  summary:
    "Start a background export of the case's chain of custody as PDF volumes (202; the same export while nothing it covers changed)",
  auth: 'bearer',
  scope: 'material:read',
  case: caseCustody,
  extension: true,
  successStatus: 202,
  errors: [403, 404],
  audit: { action: 'evidence.custody.export_started' },
});
export const getCustodyExport = /* @__PURE__ */ namedRoute('getCustodyExport', 'cases', {
  method: 'GET',
  path: '/cases/{caseId}/custody/exports/{exportId}',
  summary: "A custody export's status and progress, and once done a time-limited link to each PDF volume",
  auth: 'bearer',
  scope: 'material:read',
  case: caseCustody,
  extension: true,
  errors: [403, 404],
  audit: { action: 'evidence.custody.read', read: true },
});
export const createImport = /* @__PURE__ */ namedRoute('createImport', 'material', {
  method: 'POST',
  path: '/cases/{caseId}/imports',
  summary:
    'Create an evidence import (an mbox, a messages.csv or a support-ticket export) and get a signed link to upload its file',
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  successStatus: 201,
  errors: [400, 403, 404],
  audit: { action: 'evidence.import.created' },
});
export const startImport = /* @__PURE__ */ namedRoute('startImport', 'material', {
  method: 'POST',
  path: '/cases/{caseId}/imports/{importId}/start',
  summary: 'Queue an uploaded import for the background worker (409 until the whole file is uploaded)',
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  successStatus: 202,
  errors: [403, 404, 409],
  audit: { action: 'evidence.import.started' },
});
export const retryImport = /* @__PURE__ */ namedRoute('retryImport', 'material', {
  method: 'POST',
  path: '/cases/{caseId}/imports/{importId}/retry',
  summary: 'Queue a failed import again: it resumes from its last committed batch, skipping what is in',
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  successStatus: 202,
  errors: [403, 404, 409],
  audit: { action: 'evidence.import.retried' },
});
export const cancelImport = /* @__PURE__ */ namedRoute('cancelImport', 'material', {
  method: 'POST',
  path: '/cases/{caseId}/imports/{importId}/cancel',
  summary:
    'Cancel an import that has not ended: it is never run again, what it imported stays (409 once succeeded or cancelled)',
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  errors: [403, 404, 409],
  audit: { action: 'evidence.import.cancelled' },
});
export const signImportParts = /* @__PURE__ */ namedRoute('signImportParts', 'material', {
  method: 'POST',
  path: '/cases/{caseId}/imports/{importId}/parts',
  summary:
    'Signed PUT links for parts of an import uploaded in parts (multipart), at most 100 a call (409 once started or for a single-PUT import)',
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  errors: [400, 403, 404, 409],
  audit: {
    none: 'signs links only: the import and its upload were recorded at create, what the parts hold is recorded at start',
  },
});
export const listImportParts = /* @__PURE__ */ namedRoute('listImportParts', 'material', {
  method: 'GET',
  path: '/cases/{caseId}/imports/{importId}/parts',
  summary: 'The parts of a multipart import upload that arrived, so an interrupted upload resumes',
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  errors: [403, 404, 409],
});
export const listImports = /* @__PURE__ */ namedRoute('listImports', 'material', {
  method: 'GET',
  path: '/cases/{caseId}/imports',
  summary: "The case's evidence imports with their progress, newest first",
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  errors: [400, 403, 404],
});
export const getImport = /* @__PURE__ */ namedRoute('getImport', 'material', {
  method: 'GET',
  path: '/cases/{caseId}/imports/{importId}',
  summary: "An evidence import's status, progress and error",
  auth: 'bearer',
  scope: 'material:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  extension: true,
  errors: [403, 404],
});
export const createAttachmentUploads = /* @__PURE__ */ namedRoute('createAttachmentUploads', 'material', {
  method: 'POST',
  path: '/extraction/case/attachment-uploads',
  summary: 'Signed upload links for device-note attachments',
  auth: 'bearer',
  scope: 'notes:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseUpload,
  extension: true,
  internal: true,
  audit: { action: 'evidence.attachment_uploads.created' },
});
export const importCaseNotes = /* @__PURE__ */ namedRoute('importCaseNotes', 'material', {
  method: 'POST',
  path: '/extraction/case/import-notes',
  summary: 'Register a device and import its notes into a case',
  auth: 'bearer',
  scope: 'notes:import',
  organization: { from: 'header', role: 'any-role' },
  case: caseImport,
  lambda: { memoryMb: 1024, timeoutSeconds: 30 },
  internal: true,
  errors: [400, 403, 404],
  audit: { action: 'evidence.notes.imported' },
});

// Administration
export const getOrganizationReport = /* @__PURE__ */ namedRoute('getOrganizationReport', 'admin', {
  method: 'GET',
  path: '/admin/report/org-report',
  summary: 'Organizations with activity figures (super admin)',
  auth: 'bearer',
  superAdmin: true,
  internal: true,
  errors: [403],
});

// Review (extension): tags
export const listCaseTags = /* @__PURE__ */ namedRoute('listCaseTags', 'review', {
  method: 'GET',
  path: '/cases/{caseId}/tags',
  summary:
    "The tags usable in the case that the caller may see (system tags, and of the caller's side the organization's, the case's and their own user tags), by name",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  extension: true,
  errors: [400, 403],
});
export const createCaseTag = /* @__PURE__ */ namedRoute('createCaseTag', 'review', {
  method: 'POST',
  path: '/cases/{caseId}/tags',
  summary:
    "Create a case tag, or with type user the caller's own tag in the case, on the caller's side (a name taken by an active tag of the scope: 409)",
  auth: 'bearer',
  scope: 'review:write',
  case: caseReview,
  extension: true,
  successStatus: 201,
  errors: [400, 403, 409],
  audit: { action: 'review.tag.created' },
});
export const updateCaseTag = /* @__PURE__ */ namedRoute('updateCaseTag', 'review', {
  method: 'PATCH',
  path: '/cases/{caseId}/tags/{tagId}',
  summary:
    "Rename or recolour a case tag or the caller's user tag (system and organization tags: 403; a deleted tag: 409)",
  auth: 'bearer',
  scope: 'review:write',
  case: caseReview,
  extension: true,
  errors: [400, 403, 404, 409],
  audit: { action: 'review.tag.updated' },
});
export const deleteCaseTag = /* @__PURE__ */ namedRoute('deleteCaseTag', 'review', {
  method: 'DELETE',
  path: '/cases/{caseId}/tags/{tagId}',
  summary:
    "Delete a case tag or the caller's user tag: it is deactivated, its links and their history kept; answers the tag (again unchanged when already deleted)",
  auth: 'bearer',
  scope: 'review:write',
  case: caseReview,
  extension: true,
  errors: [403, 404],
  audit: { action: 'review.tag.deactivated' },
});
export const listOrganizationTags = /* @__PURE__ */ namedRoute('listOrganizationTags', 'review', {
  method: 'GET',
  path: '/organization/{orgId}/tags',
  summary: "The organization's tags, by name (org admin or owner)",
  auth: 'bearer',
  scope: 'organization:read',
  organization: { from: 'path', role: 'admin-or-owner' },
  extension: true,
  errors: [400, 403],
});
export const createOrganizationTag = /* @__PURE__ */ namedRoute('createOrganizationTag', 'review', {
  method: 'POST',
  path: '/organization/{orgId}/tags',
  summary:
    'Create an organization tag, usable by the firm in every case, never by opposing counsel (org admin or owner; a name taken: 409)',
  auth: 'bearer',
  scope: 'organization:write',
  organization: { from: 'path', role: 'admin-or-owner' },
  extension: true,
  successStatus: 201,
  errors: [400, 403, 409],
  audit: { action: 'review.tag.created' },
});
export const updateOrganizationTag = /* @__PURE__ */ namedRoute('updateOrganizationTag', 'review', {
  method: 'PATCH',
  path: '/organization/{orgId}/tags/{tagId}',
  summary: 'Rename or recolour an organization tag (org admin or owner; system tags: 403; a deleted tag: 409)',
  auth: 'bearer',
  scope: 'organization:write',
  organization: { from: 'path', role: 'admin-or-owner' },
  extension: true,
  errors: [400, 403, 404, 409],
  audit: { action: 'review.tag.updated' },
});
export const deleteOrganizationTag = /* @__PURE__ */ namedRoute('deleteOrganizationTag', 'review', {
  method: 'DELETE',
  path: '/organization/{orgId}/tags/{tagId}',
  summary:
    'Delete an organization tag: it is deactivated, its links and their history kept (org admin or owner); answers the tag',
  auth: 'bearer',
  scope: 'organization:write',
  organization: { from: 'path', role: 'admin-or-owner' },
  extension: true,
  errors: [403, 404],
  audit: { action: 'review.tag.deactivated' },
});

// Review (extension): case search
export const searchCase = /* @__PURE__ */ namedRoute('searchCase', 'review', {
  method: 'GET',
  path: '/cases/{caseId}/search',
  summary: "Search all of a case's evidence: emails, network messages, support tickets, device notes",
  auth: 'bearer',
  scope: 'material:read',
  case: caseRead,
  extension: true,
  errors: [400, 403, 404],
  audit: { action: 'evidence.case.searched', read: true },
});

// Review (extension): tagging evidence
export const tagEvidence = /* @__PURE__ */ namedRoute('tagEvidence', 'review', {
  method: 'POST',
  path: '/cases/{caseId}/tagging',
  summary:
    'Add and remove tags on up to 1,000 evidence items at once, all or nothing; or on every email a filter matches, as a background job (202 either way)',
  auth: 'bearer',
  scope: 'review:write',
  case: caseReview,
  extension: true,
  successStatus: 202,
  errors: [400, 403, 404, 409],
  audit: { action: 'evidence.tagged' },
});
export const getTaggingJob = /* @__PURE__ */ namedRoute('getTaggingJob', 'review', {
  method: 'GET',
  path: '/cases/{caseId}/tagging/{jobId}',
  summary: "A tagging job's status and progress (a job of the caller's side of the case)",
  auth: 'bearer',
  scope: 'material:read',
  case: caseReview,
  extension: true,
  errors: [403, 404],
});

/** The table: every entry, in this order (the local server, infra, OpenAPI and the tests read it). */
export const routes = {
  login,
  generateToken,
  listTokens,
  revokeToken,
  updateTokenScopes,
  listSessions,
  endSession,
  refreshToken,
  logout,
  register,
  sendForgotPasswordLink,
  resetPassword,
  checkEmailAvailability,
  getProfile,
  updateProfile,
  changePassword,
  verifyEmail,
  resendVerificationEmail,
  createOrganization,
  listInvitations,
  validateOrganizationName,
  listPendingInvitations,
  getOrganization,
  updateOrganization,
  getOrganizationBySlug,
  getOrganizationUsage,
  getStorageStats,
  listMyOrganizations,
  listMembers,
  inviteUsers,
  deleteInvitation,
  resendInvitation,
  acceptInvitation,
  rejectInvitation,
  listAuditEvents,
  verifyAuditChain,
  updateUserRoles,
  updateOrganizationUsers,
  removeOrganizationUser,
  upgradeCaseToPro,
  createBillingSetupSession,
  selectPlan,
  getCaseStatement,
  getReconciliation,
  listBillingHistory,
  listPlans,
  getCurrentPlan,
  getCredits,
  createBillingReport,
  stripeWebhook,
  createCase,
  listCases,
  getCase,
  updateCase,
  deleteCase,
  grantCaseAccess,
  revokeCaseAccess,
  listEmailThreads,
  listThreadEmails,
  searchNetworkMessages,
  listNetworkProfiles,
  listChatProfiles,
  listSupportTickets,
  getCaseCustody,
  startCustodyExport,
  getCustodyExport,
  createImport,
  startImport,
  retryImport,
  cancelImport,
  signImportParts,
  listImportParts,
  listImports,
  getImport,
  createAttachmentUploads,
  importCaseNotes,
  getOrganizationReport,
  listCaseTags,
  createCaseTag,
  updateCaseTag,
  deleteCaseTag,
  listOrganizationTags,
  createOrganizationTag,
  updateOrganizationTag,
  deleteOrganizationTag,
  searchCase,
  tagEvidence,
  getTaggingJob,
};

export type RouteName = keyof typeof routes;
export const routeList: readonly RouteDefinition[] = Object.values(routes);
