import { CASE_RULES } from '../lib/cases/rules';
import { defineRoute, defineRoutes, type RouteDefinition } from '../lib/http/route';

/**
 * THE route table: every route once. Read by the local server, infra, the OpenAPI generator and
 * the tests; handlers import their own entry. Nothing else lists routes.
 *
 * An entry states only what differs from the defaults of `defineRoute` (lib/http/route.ts): the
 * operation id is the key, the handler is functions/<area>/<kebab-case key>.ts, no scope (full
 * sessions only), not internal, 200, the default throttle, and no error statuses beyond those the
 * entry's own rules imply. `errors` lists the others the contract names.
 */
export const routes = defineRoutes({
  // Authentication and tokens
  login: defineRoute('auth', 'POST /auth/login', {
    summary:
      'Sign in with email and password (failed sign-ins: at most 10 per account per client IP and 100 per client IP in 15 minutes, then 429)',
    auth: 'none',
    throttle: { rate: 20, burst: 40 },
    errors: [401, 429],
  }),
  generateToken: defineRoute('auth', 'POST /auth/generate-token', {
    summary: 'Mint a scoped automation token or a legacy full-access token',
    auth: 'bearer',
    throttle: { rate: 5, burst: 10 },
    errors: [400, 401, 403],
  }),
  listTokens: defineRoute('auth', 'GET /auth/tokens', {
    summary: "List the caller's automation tokens",
    auth: 'bearer',
  }),
  revokeToken: defineRoute('auth', 'DELETE /auth/tokens/{id}', {
    summary: 'Revoke an automation token',
    auth: 'bearer',
    successStatus: 204,
    errors: [404],
  }),
  updateTokenScopes: defineRoute('auth', 'PATCH /auth/tokens/{id}/scopes', {
    summary: "Replace an automation token's scopes",
    auth: 'bearer',
    errors: [400, 403, 404],
  }),
  listSessions: defineRoute('auth', 'GET /auth/sessions', {
    summary: "List the caller's sign-in sessions and legacy tokens (never their values)",
    auth: 'bearer',
    extension: true,
  }),
  endSession: defineRoute('auth', 'DELETE /auth/sessions/{id}', {
    summary: "End one of the caller's sign-in sessions or legacy tokens",
    auth: 'bearer',
    extension: true,
    successStatus: 204,
    errors: [404],
  }),
  refreshToken: defineRoute('auth', 'POST /auth/refresh', {
    summary: 'Get a new access token for a refresh token',
    auth: 'none',
    errors: [400, 404],
  }),
  logout: defineRoute('auth', 'POST /auth/logout', {
    summary: 'End the session of the bearer token',
    auth: 'bearer',
  }),
  register: defineRoute('auth', 'POST /auth/register', {
    summary: 'Create an account (and its organization) and sign in',
    auth: 'none',
    throttle: { rate: 5, burst: 10 },
    errors: [400],
  }),
  sendForgotPasswordLink: defineRoute('auth', 'POST /auth/send-forgot-password-link', {
    summary: 'Email a password reset link (always 200; at most 3 links per address per hour)',
    auth: 'none',
    throttle: { rate: 5, burst: 10 },
  }),
  resetPassword: defineRoute('auth', 'POST /auth/reset-password', {
    summary:
      'Set a new password with an emailed reset token; ends every sign-in session, legacy token and automation token of the account',
    auth: 'none',
    throttle: { rate: 5, burst: 10 },
  }),
  checkEmailAvailability: defineRoute('auth', 'POST /auth/check-email-availability', {
    summary: 'Tell whether an email is free to register',
    auth: 'none',
    rateLimit: { perMinute: 10 },
    throttle: { rate: 10 / 60, burst: 10 },
  }),

  // User
  getProfile: defineRoute('user', 'GET /user/profile', {
    summary: "The caller's profile with every organization",
    auth: 'bearer',
    scope: 'profile:read',
  }),
  updateProfile: defineRoute('user', 'PATCH /user/profile', {
    summary: "Update the caller's profile",
    auth: 'bearer',
    scope: 'profile:write',
  }),
  changePassword: defineRoute('user', 'POST /user/change-password', {
    summary:
      "Change the caller's password; ends every other sign-in session and every legacy token (scoped automation tokens survive: listed and revocable at /auth/tokens)",
    auth: 'bearer',
    throttle: { rate: 5, burst: 10 },
    errors: [400],
  }),
  verifyEmail: defineRoute('user', 'POST /user/verify-email', {
    summary: 'Verify an email address with the emailed token',
    auth: 'none',
    errors: [400, 404],
  }),
  resendVerificationEmail: defineRoute('user', 'POST /user/resend-verification-email', {
    summary: 'Send a new email verification link to the caller',
    auth: 'bearer',
    rateLimit: { perMinute: 3 },
    internal: true,
    throttle: { rate: 3 / 60, burst: 3 },
    errors: [400],
  }),

  // Organizations
  createOrganization: defineRoute('organization', 'POST /organization', {
    summary: 'Create an organization with the caller as owner',
    auth: 'bearer',
    scope: 'organization:write',
    successStatus: 201,
    throttle: { rate: 5, burst: 10 },
    errors: [400],
  }),
  listInvitations: defineRoute('organization', 'GET /organization/invitations', {
    summary: "Invitations of the caller's organizations",
    auth: 'bearer',
    scope: 'organization:read',
    organizationHeader: 'required',
    errors: [403],
  }),
  validateOrganizationName: defineRoute('organization', 'POST /organization/validate-name', {
    summary: 'Tell whether an organization name is free',
    auth: 'none',
    organizationHeader: 'required',
    internal: true,
    throttle: { rate: 5, burst: 10 },
  }),
  listPendingInvitations: defineRoute('organization', 'GET /organization/pending-invitations', {
    summary: "The caller's own pending invitations (none until the caller's address is verified)",
    auth: 'bearer',
    scope: 'organization:read',
    internal: true,
  }),
  getOrganization: defineRoute('organization', 'GET /organization/{orgId}', {
    summary: 'Organization details',
    auth: 'bearer',
    scope: 'organization:read',
    organization: { from: 'path', role: 'any-role' },
    errors: [403],
  }),
  updateOrganization: defineRoute('organization', 'PATCH /organization/{orgId}', {
    summary: 'Update the organization',
    auth: 'bearer',
    scope: 'organization:write',
    organization: { from: 'path', role: 'admin-or-owner', activePlan: true },
    successStatus: 201,
    errors: [400, 403],
  }),
  getOrganizationBySlug: defineRoute('organization', 'GET /organization/slug/{slug}', {
    summary: 'Organization details by slug',
    auth: 'bearer',
    scope: 'organization:read',
    internal: true,
    errors: [403],
  }),
  getOrganizationUsage: defineRoute('organization', 'GET /organization/{orgId}/usages-stat', {
    summary: "The organization's plan usage",
    auth: 'bearer',
    scope: 'organization:read',
    organization: { from: 'path', role: 'any-role' },
    internal: true,
    errors: [400, 403],
  }),
  getStorageStats: defineRoute('organization', 'GET /organization/{orgId}/storage-stats', {
    summary: 'Storage used by live cases, largest first',
    auth: 'bearer',
    scope: 'organization:read',
    organization: { from: 'path', role: 'any-role' },
    errors: [403],
  }),
  listMyOrganizations: defineRoute('organization', 'GET /organization/user/organizations', {
    summary: 'Every organization of the caller',
    auth: 'bearer',
    scope: 'organization:read',
  }),
  listMembers: defineRoute('organization', 'GET /organization/{orgId}/members', {
    summary: 'Members of the organization',
    auth: 'bearer',
    scope: 'organization:read',
    organization: { from: 'path', role: 'any-role' },
    organizationHeader: 'required',
    errors: [403],
  }),
  inviteUsers: defineRoute('organization', 'POST /organization/{orgId}/invite', {
    summary: 'Invite people to the organization',
    auth: 'bearer',
    scope: 'members:write',
    organization: { from: 'path', role: 'member-or-above', activePlan: true },
    successStatus: 201,
    throttle: { rate: 5, burst: 10 },
    errors: [401, 403, 404],
  }),
  deleteInvitation: defineRoute('organization', 'DELETE /organization/{orgId}/invitation/{invitationId}', {
    summary: 'Delete a pending invitation',
    auth: 'bearer',
    scope: 'members:write',
    organization: { from: 'path', role: 'member-or-above', activePlan: true },
    errors: [400, 403, 404],
  }),
  resendInvitation: defineRoute('organization', 'POST /organization/{orgId}/invitation/{invitationId}/resend', {
    summary: 'Send an invitation again with a new token',
    auth: 'bearer',
    scope: 'members:write',
    organization: { from: 'path', role: 'member-or-above', activePlan: true },
    successStatus: 201,
    throttle: { rate: 5, burst: 10 },
    errors: [400, 403, 404],
  }),
  acceptInvitation: defineRoute('organization', 'POST /organization/{orgId}/invitation/accept', {
    summary:
      'Accept an invitation with the emailed token; an unverified account of the address is taken over (name and password required, signed in, its earlier sessions ended)',
    auth: 'none',
    successStatus: 201,
    throttle: { rate: 5, burst: 10 },
    errors: [400, 403, 404],
  }),
  rejectInvitation: defineRoute('organization', 'POST /organization/{orgId}/invitation/reject', {
    summary: 'Reject an invitation with the emailed token',
    auth: 'none',
    envelope: 'no-data',
    internal: true,
    throttle: { rate: 5, burst: 10 },
    errors: [400, 404],
  }),
  updateUserRoles: defineRoute('organization', 'PATCH /organization/{orgId}/update-user-role', {
    summary: 'Set the role of several members',
    auth: 'bearer',
    scope: 'members:write',
    organization: { from: 'path', role: 'admin-or-owner', activePlan: true },
    internal: true,
    errors: [400, 403],
  }),
  updateOrganizationUsers: defineRoute('organization', 'PATCH /organization/{orgId}/user', {
    summary: "Change members' roles, names or emails, all or nothing",
    auth: 'bearer',
    scope: 'members:write',
    organization: { from: 'path', role: 'admin-or-owner', activePlan: true },
    errors: [400, 403, 404],
  }),
  removeOrganizationUser: defineRoute('organization', 'DELETE /organization/{orgId}/user/{userId}', {
    summary:
      'Remove a member from the organization (any member may remove themselves, except the last owner); cases the member alone owned go to an owner',
    auth: 'bearer',
    scope: 'members:write',
    organization: { from: 'path', role: 'admin-or-owner', activePlan: true, self: 'userId' },
    errors: [400, 403, 404],
  }),

  // Billing
  upgradeCaseToPro: defineRoute('cases', 'POST /cases/{caseId}/pro-upgrade', {
    summary: 'Upgrade a case to Pro (one-time charge)',
    auth: 'bearer',
    scope: 'billing:write',
    organization: { from: 'header', role: 'member-or-above', activePlan: true },
    case: CASE_RULES.billing,
    throttle: { rate: 5, burst: 50 },
    errors: [403, 404, 409],
  }),
  createBillingSetupSession: defineRoute('billing', 'POST /billing/setup-session', {
    handler: 'functions/billing/create-setup-session.ts',
    summary: 'Start a card set-up (checkout in setup mode)',
    auth: 'bearer',
    scope: 'billing:write',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    throttle: { rate: 5, burst: 10 },
    errors: [403, 409],
  }),
  selectPlan: defineRoute('billing', 'POST /billing/plan', {
    summary: 'Select or change the self-serve tier',
    auth: 'bearer',
    scope: 'billing:write',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    throttle: { rate: 5, burst: 10 },
    errors: [400, 403, 409],
  }),
  getCaseStatement: defineRoute('cases', 'GET /cases/{caseId}/billing/statement', {
    summary: "A case's billing rows and totals",
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'member-or-above' },
    case: CASE_RULES.billing,
    errors: [403, 404],
  }),
  getReconciliation: defineRoute('billing', 'GET /billing/reconciliation', {
    summary: "The organization's billing rows grouped by case",
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    errors: [403],
  }),
  listBillingHistory: defineRoute('billing', 'GET /billing/history', {
    summary: 'Audit trail of billing changes',
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    internal: true,
    errors: [403],
  }),
  listPlans: defineRoute('billing', 'GET /billing/plans', {
    summary: 'The self-serve tier catalog',
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    errors: [403],
  }),
  getCurrentPlan: defineRoute('billing', 'GET /billing/plan/current', {
    summary: "The organization's plan and usage",
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    errors: [403],
  }),
  getCredits: defineRoute('billing', 'GET /billing/credits', {
    summary: 'Credit balance and ledger',
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    errors: [403],
  }),
  createBillingReport: defineRoute('billing', 'POST /billing/report', {
    summary: 'Billing report as JSON or PDF',
    auth: 'bearer',
    scope: 'billing:read',
    organization: { from: 'header', role: 'admin-owner-or-billing' },
    // API Gateway answers 503 after 29 s, so the function must finish within that.
    lambda: { memoryMb: 1536, timeoutSeconds: 29 },
    internal: true,
    throttle: { rate: 2, burst: 5 },
    errors: [400, 404],
  }),
  stripeWebhook: defineRoute('webhooks', 'POST /webhooks/stripe', {
    summary: 'Stripe events (signature verified)',
    auth: 'none',
    extension: true,
    rawBody: true,
    throttle: { rate: 50, burst: 200 },
    errors: [400, 404],
  }),

  // Cases (extension) and case material
  createCase: defineRoute('cases', 'POST /cases', {
    summary: 'Open a case in the organization of the header',
    auth: 'bearer',
    scope: 'cases:write',
    organization: { from: 'header', role: 'member-or-above', activePlan: true },
    extension: true,
    successStatus: 201,
    errors: [403],
  }),
  listCases: defineRoute('cases', 'GET /cases', {
    summary: 'Cases the caller has access to',
    auth: 'bearer',
    scope: 'cases:read',
    organization: { from: 'header', role: 'any-role' },
    extension: true,
    errors: [403],
  }),
  getCase: defineRoute('cases', 'GET /cases/{caseId}', {
    summary: 'One case',
    auth: 'bearer',
    scope: 'cases:read',
    organization: { from: 'header', role: 'any-role' },
    case: CASE_RULES.read,
    extension: true,
    errors: [403, 404],
  }),
  updateCase: defineRoute('cases', 'PATCH /cases/{caseId}', {
    summary: 'Rename, archive or restore a case',
    auth: 'bearer',
    scope: 'cases:write',
    organization: { from: 'header', role: 'any-role' },
    case: CASE_RULES.manage,
    extension: true,
    errors: [400, 403, 404],
  }),
  deleteCase: defineRoute('cases', 'DELETE /cases/{caseId}', {
    summary: 'Delete a case (soft)',
    auth: 'bearer',
    scope: 'cases:write',
    organization: { from: 'header', role: 'any-role' },
    case: CASE_RULES.delete,
    extension: true,
    errors: [403, 404],
  }),
  grantCaseAccess: defineRoute('cases', 'PUT /cases/{caseId}/access/{userId}', {
    summary: 'Grant or change case access of a member',
    auth: 'bearer',
    scope: 'cases:write',
    organization: { from: 'header', role: 'any-role' },
    case: CASE_RULES.manage,
    extension: true,
    errors: [403, 404],
  }),
  revokeCaseAccess: defineRoute('cases', 'DELETE /cases/{caseId}/access/{userId}', {
    summary: 'Revoke case access',
    auth: 'bearer',
    scope: 'cases:write',
    organization: { from: 'header', role: 'any-role' },
    case: { ...CASE_RULES.manage, self: 'userId' },
    extension: true,
    errors: [400, 403, 404],
  }),
  listEmailThreads: defineRoute('material', 'GET /local-emails/{caseId}/threads', {
    summary: "The case's email threads, latest activity first",
    auth: 'bearer',
    scope: 'material:read',
    case: CASE_RULES.read,
    extension: true,
    errors: [403, 404],
  }),
  listThreadEmails: defineRoute('material', 'GET /local-emails/{caseId}/threads/{threadId}/emails', {
    summary: 'Emails of one thread, filtered',
    auth: 'bearer',
    scope: 'material:read',
    case: CASE_RULES.read,
    errors: [400, 403, 404],
  }),
  searchNetworkMessages: defineRoute('material', 'GET /professional-network/{caseId}/search-messages', {
    summary: "Search the case's professional-network messages",
    auth: 'bearer',
    scope: 'material:read',
    case: CASE_RULES.read,
    errors: [403, 404],
  }),
  listNetworkProfiles: defineRoute('material', 'GET /professional-network/{caseId}/profiles', {
    summary: "The case's professional-network profiles",
    auth: 'bearer',
    scope: 'material:read',
    case: CASE_RULES.read,
    extension: true,
    errors: [403, 404],
  }),
  listChatProfiles: defineRoute('material', 'GET /chat-platform/{caseId}/profiles', {
    summary: "The case's chat-platform profiles",
    auth: 'bearer',
    scope: 'material:read',
    case: CASE_RULES.read,
    extension: true,
    errors: [403, 404],
  }),
  listSupportTickets: defineRoute('material', 'GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets', {
    summary: "A chat-platform profile's support tickets",
    auth: 'bearer',
    scope: 'material:read',
    case: CASE_RULES.read,
    errors: [403, 404],
  }),
  createAttachmentUploads: defineRoute('material', 'POST /extraction/case/attachment-uploads', {
    summary: 'Signed upload links for device-note attachments',
    auth: 'bearer',
    scope: 'notes:import',
    organization: { from: 'header', role: 'any-role' },
    case: CASE_RULES.upload,
    extension: true,
    internal: true,
  }),
  importCaseNotes: defineRoute('material', 'POST /extraction/case/import-notes', {
    summary: 'Register a device and import its notes into a case',
    auth: 'bearer',
    scope: 'notes:import',
    organization: { from: 'header', role: 'any-role' },
    case: CASE_RULES.import,
    lambda: { memoryMb: 1024, timeoutSeconds: 30 },
    internal: true,
    errors: [400, 403, 404],
  }),

  // Administration
  getOrganizationReport: defineRoute('admin', 'GET /admin/report/org-report', {
    summary: 'Organizations with activity figures (super admin)',
    auth: 'bearer',
    superAdmin: true,
    internal: true,
    errors: [403],
  }),
});

export type RouteName = keyof typeof routes;
export const routeList: readonly RouteDefinition[] = Object.values(routes);
