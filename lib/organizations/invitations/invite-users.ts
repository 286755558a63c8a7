import { transaction } from '../../db/transaction';
import type * as z from 'zod/mini';
import type { InviteOrganizationUsersDto } from '../../../schemas/organization/members';
import type { Actor } from '../../auth/actor';
import type { OrganizationContext } from '../context';
import { loadOrganization } from '../load';
import { ROLES_BY_RANK, type OrganizationRole } from '../roles';
import { InviteRoleNotAllowedError } from './errors';
import { inviteToOrganization, recordInvitations } from './invite-to-organization';

/** Roles an inviter may hand out: a plain member only client or member; others up to their own rank. */
export function assertMayInvite(inviterRole: OrganizationRole, role: OrganizationRole): void {
  const allowed =
    inviterRole === 'member'
      ? role === 'client' || role === 'member'
      : ROLES_BY_RANK.indexOf(role) >= ROLES_BY_RANK.indexOf(inviterRole);
  if (!allowed) throw new InviteRoleNotAllowedError(inviterRole, role);
}

/** POST /organization/{orgId}/invite */
export async function inviteUsers(
  { organization, actor }: { organization: OrganizationContext; actor: Actor },
  input: z.output<typeof InviteOrganizationUsersDto>,
) {
  const role = input.role ?? 'member';
  assertMayInvite(organization.role, role);
  const result = await transaction(async (tx, afterCommit) => {
    const outcome = await inviteToOrganization(tx, afterCommit, {
      organization: await loadOrganization(organization.id, tx),
      inviter: { id: actor.user.id, name: actor.user.name },
      emails: input.emails,
      role,
    });
    recordInvitations(tx, organization.id, outcome);
    return outcome;
  });
  const parts = [`${result.invited.length} invitation(s) sent`];
  if (result.added.length > 0) parts.push(`${result.added.length} existing user(s) added`);
  const skipped = new Set(input.emails.map((e) => e.toLowerCase())).size - result.invited.length - result.added.length;
  if (skipped > 0) parts.push(`${skipped} already member(s) skipped`);
  return { message: parts.join(', ') };
}
