import type * as z from 'zod/mini';
import { recordAudit } from '../audit/record';
import { transaction } from '../db/transaction';
import type { Actor } from '../auth/actor';
import { invitationsSentWith, inviteToOrganization } from './invitations/invite-to-organization';
import type { CreateOrganizationDto } from '../../schemas/organization/organization';
import { forgetCachedProfile } from '../users/profile';
import { OrganizationNameTakenError } from './errors';
import { invitationCounts, toOrganizationDetails } from './entity';
import { insertOrganization } from './insert-organization';

/**
 * POST /organization: the caller becomes owner; free plan; processor customer; invitations. As at
 * register, invitations beyond the free plan's seats are not sent and are counted in the answer.
 */
export async function createOrganization({ actor }: { actor: Actor }, input: z.output<typeof CreateOrganizationDto>) {
  const { organization, invitations } = await transaction(async (tx, afterCommit) => {
    const created = await insertOrganization(tx, afterCommit, {
      name: input.name,
      ownerId: actor.user.id,
      email: actor.user.email,
    });
    if (!created) throw new OrganizationNameTakenError();
    const outcome = await inviteToOrganization(tx, afterCommit, {
      organization: created,
      inviter: { id: actor.user.id, name: actor.user.name },
      emails: (input.inviteEmails ?? []).filter((email) => email !== actor.user.email),
      role: 'member',
      beyondSeats: 'skip',
    });
    // The invitations sent with the creation are part of it: one event, naming them.
    recordAudit(tx, {
      action: 'organization.created',
      organizationId: created.id,
      target: { type: 'organization', id: created.id },
      metadata: {
        name: created.name,
        slug: created.slug,
        ...invitationsSentWith(outcome),
      },
    });
    return { organization: created, invitations: outcome };
  });
  forgetCachedProfile(actor.user.id);
  return { ...toOrganizationDetails(organization, 'owner'), invitations: invitationCounts(invitations) };
}
