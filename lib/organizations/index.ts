/** The organizations domain: organizations, their members and invitations. One file per use case. */
export { createOrganization } from './create-organization';
export { getOrganization, getOrganizationBySlug } from './get-organization';
export { getOrganizationUsage } from './get-organization-usage';
export { getStorageStats } from './get-storage-stats';
export { listMembers } from './list-members';
export { listMyOrganizations } from './list-my-organizations';
export { findMembership } from './membership';
export { removeOrganizationUser } from './remove-organization-user';
export { updateOrganization } from './update-organization';
export { updateOrganizationUsers } from './update-organization-users';
export { updateUserRoles } from './update-user-roles';
export { validateOrganizationName } from './validate-organization-name';
export { acceptInvitation } from './invitations/accept-invitation';
export { deleteInvitation } from './invitations/delete-invitation';
export { inviteUsers } from './invitations/invite-users';
export { listInvitations, listPendingInvitations } from './invitations/list-invitations';
export { rejectInvitation } from './invitations/reject-invitation';
export { resendInvitation } from './invitations/resend-invitation';
