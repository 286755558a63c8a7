import type * as z from 'zod/mini';
import type { RegisterEmailDto } from '../../schemas/auth/register';
import { recordAudit } from '../audit/record';
import { provenUser } from '../audit/scope';
import { type ClientInfo, openLoginSession } from '../auth/sessions';
import { now } from '../clock';
import type { Executor } from '../db/client';
import { type AfterCommit, transaction } from '../db/transaction';
import { queueEmail } from '../mail/outbox';
import { mailTemplates } from '../mail/templates';
import { hashPassword } from '../secrets';
import { TERMS_VERSION } from '../users';
import { createAccount } from '../users/create-account';
import { issueEmailToken } from '../users/email-tokens';
import { EmailRegisteredError, TermsNotAcceptedError } from '../users/errors';
import { buildUserProfile } from '../users/profile';
import { invitationCounts, toOrganizationDetails } from './entity';
import { OrganizationNameTakenError } from './errors';
import { insertOrganization } from './insert-organization';
import { invitationsSentWith, inviteToOrganization } from './invitations/invite-to-organization';

/**
 * POST /auth/register. Here rather than in lib/users because it composes an organization (lib/users
 * stays below lib/organizations); the account itself is lib/users' to write.
 * Creates the user, their organization (owner, free plan), invitations for `inviteEmails`, the
 * terms acceptance and a verification email, and signs the user in: all in one transaction.
 * Invitations beyond the free plan's seats are not sent (the first ones given are): the answer's
 * `organizationInfo.invitations` counts both, and sign-up never fails for them.
 */
export async function register({ client }: { client: ClientInfo | null }, input: z.output<typeof RegisterEmailDto>) {
  if (!input.acceptTerms) throw new TermsNotAcceptedError();
  const invitees = (input.inviteEmails ?? []).filter((email) => email.toLowerCase() !== input.email.toLowerCase());
  const passwordHash = await hashPassword(input.password);

  const created = await transaction(async (tx, afterCommit) => {
    const user = await createAccount(tx, {
      email: input.email,
      name: input.name,
      passwordHash,
      termsAcceptedAt: now(),
      termsVersion: TERMS_VERSION,
    });
    if (!user) throw new EmailRegisteredError();

    const organization = input.organizationName
      ? await insertOrganization(tx, afterCommit, { name: input.organizationName, ownerId: user.id, email: user.email })
      : await insertOrganizationWithFreeName(tx, afterCommit, `${user.name}'s Organization`, user);
    if (!organization) throw new OrganizationNameTakenError();
    const { sessionId, tokens } = await openLoginSession(tx, user.id, client);
    const invitations = await inviteToOrganization(tx, afterCommit, {
      organization,
      inviter: { id: user.id, name: user.name },
      emails: invitees,
      role: 'member',
      beyondSeats: 'skip',
    });
    // The organization's first event: its owner, named with the session this request opens, and the
    // invitations sent with the sign-up (part of it, as for organization.created).
    recordAudit(tx, {
      action: 'user.registered',
      organizationId: organization.id,
      target: { type: 'user', id: user.id },
      actor: provenUser(user.id, sessionId),
      metadata: {
        termsVersion: TERMS_VERSION,
        organization: { name: organization.name, slug: organization.slug },
        ...invitationsSentWith(invitations),
      },
    });
    const verificationToken = await issueEmailToken(tx, user, 'verify_email');
    await queueEmail(tx, afterCommit, mailTemplates.verifyEmail(user.email, user.name, verificationToken));
    return { user, organization, tokens, invitations };
  });

  return {
    ...created.tokens,
    userProfile: await buildUserProfile(created.user.id),
    organizationInfo: {
      ...toOrganizationDetails(created.organization, 'owner'),
      invitations: invitationCounts(created.invitations),
    },
  };
}

/** A name the user did not choose must not fail sign-up: "Ann's Organization (2)" when taken. */
async function insertOrganizationWithFreeName(
  tx: Executor,
  afterCommit: AfterCommit,
  baseName: string,
  user: { id: string; email: string },
) {
  for (let n = 1; n <= 20; n += 1) {
    const name = n === 1 ? baseName : `${baseName} (${n})`;
    const organization = await insertOrganization(tx, afterCommit, { name, ownerId: user.id, email: user.email });
    if (organization) return organization;
  }
  return null;
}
