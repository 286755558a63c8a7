import { eq } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { provenUser } from '../../audit/scope';
import { canSignIn, type ClientInfo, endSessionsOfUser, openLoginSession } from '../../auth/sessions';
import { now } from '../../clock';
import { db, type Executor } from '../../db/client';
import { invitations, organizationMembers, organizationPlans, organizations } from '../../db/schema/organizations';
import { users } from '../../db/schema/users';
import { transaction } from '../../db/transaction';
import type * as z from 'zod/mini';
import type { AcceptOrganizationInvitationRequestDto } from '../../../schemas/organization/members';
import type { OrganizationIdPath } from '../../../schemas/organization/organization';
import { idEquals } from '../../ids';
import { toOrganizationDetails } from '../entity';
import { NoActivePlanError, UnknownOrganizationError } from '../errors';
import type { OrganizationRow } from '../load';
import { hashPassword } from '../../secrets';
import { createAccount } from '../../users/create-account';
import { buildUserProfile, forgetCachedProfile } from '../../users/profile';
import { takeOverAccount } from '../../users/take-over-account';
import { AccountJustCreatedError, AccountJustDeletedError, InviteeDetailsRequiredError } from './errors';
import { endEarlierHoldersWork } from './end-earlier-holders-work';
import { invitationForToken } from './find-invitation';

async function organizationWithActivePlan(tx: Executor, organizationId: string): Promise<OrganizationRow> {
  const [row] = await tx
    .select({ organization: organizations, planActive: organizationPlans.isActive })
    .from(organizations)
    .leftJoin(organizationPlans, eq(organizationPlans.organizationId, organizations.id))
    .where(idEquals(organizations.id, organizationId))
    .limit(1);
  // An id that is not a UUID names no organization: 404 like an unknown one.
  if (!row) throw new UnknownOrganizationError();
  if (!row.planActive) throw new NoActivePlanError();
  return row.organization;
}

type AcceptInput = z.output<typeof OrganizationIdPath> & z.output<typeof AcceptOrganizationInvitationRequestDto>;

/**
 * Whether accepting as this account takes it over: an unverified account that may sign in. Its
 * owner never proved the mailbox, and accepting the emailed token does.
 */
const isTakeover = (user: typeof users.$inferSelect | undefined): boolean =>
  !!user && !user.isEmailVerified && canSignIn(user);

/**
 * POST .../invitation/accept (no auth): joins the organization with the invited role. The emailed
 * token proves the mailbox of the invited address, so:
 * - no account: name and password are required; the account is created verified and signed in;
 * - an unverified account (anyone could have registered the address): taken over by the acceptor,
 *   exactly as if new: name and password required, the password replaced, the email marked
 *   verified, every earlier sign-in session, legacy and automation token and emailed token of it
 *   ended, what the earlier holder built with it ended (./end-earlier-holders-work.ts), and the
 *   acceptor signed in;
 * - a verified account: joins, `login` is null.
 * One transaction for all of it.
 */
export async function acceptInvitation({ client }: { client: ClientInfo }, input: AcceptInput) {
  const organizationId = input.orgId;
  const [existing] = await db().select().from(users).where(eq(users.email, input.email)).limit(1);
  const needsDetails = !existing || isTakeover(existing);
  if (needsDetails && (!input.name || !input.password)) {
    // Checked before hashing, but only after the invitation itself is known to be valid.
    await transaction(async (tx) => {
      const organization = await organizationWithActivePlan(tx, organizationId);
      await invitationForToken(tx, organization.id, input.token, input.email);
    });
    throw new InviteeDetailsRequiredError(Boolean(existing));
  }
  const passwordHash = needsDetails ? await hashPassword(input.password!) : null;
  const result = await transaction(async (tx, afterCommit) => {
    const organization = await organizationWithActivePlan(tx, organizationId);
    const invitation = await invitationForToken(tx, organization.id, input.token, input.email);
    let userId: string;
    let signIn: boolean;
    let account: 'created' | 'taken_over' | 'existing';
    // Read again under a lock: the account may have been created, verified or changed meanwhile.
    const [current] = await tx.select().from(users).where(eq(users.email, input.email)).limit(1).for('update');
    if (!current) {
      if (!passwordHash) throw new AccountJustDeletedError();
      const created = await createAccount(tx, {
        email: input.email,
        name: input.name!,
        passwordHash,
        isEmailVerified: true,
        emailVerifiedAt: now(),
      });
      if (!created) throw new AccountJustCreatedError();
      userId = created.id;
      signIn = true;
      account = 'created';
    } else if (isTakeover(current)) {
      // Registered meanwhile without proof of the mailbox: taken over like one found unverified above.
      if (!passwordHash) throw new InviteeDetailsRequiredError(true);
      // What the earlier holder stated about themselves is not the acceptor's: as for a new invitee;
      // their emailed links die with the account's past (lib/users/take-over-account.ts).
      await takeOverAccount(tx, afterCommit, current.id, { name: input.name!, passwordHash });
      await endSessionsOfUser(tx, current.id);
      // So do the organizations, memberships and invitations it built (before the new sign-in is recorded anywhere).
      await endEarlierHoldersWork(tx, afterCommit, current, organization.id);
      userId = current.id;
      signIn = true;
      account = 'taken_over';
    } else {
      userId = current.id;
      signIn = false;
      account = 'existing';
    }
    const role = invitation.role;
    const joined = await tx
      .insert(organizationMembers)
      .values({ organizationId: organization.id, userId, role })
      .onConflictDoNothing()
      .returning({ userId: organizationMembers.userId });
    await tx
      .update(invitations)
      .set({ status: 'accepted', acceptedById: userId, invitedUserId: invitation.invitedUserId ?? userId })
      .where(eq(invitations.id, invitation.id));
    const session = signIn ? await openLoginSession(tx, userId, client) : null;
    // The emailed token proves who acts: the invitee, through the session this signs them into if any.
    recordAudit(tx, {
      action: 'organization.member.joined',
      organizationId: organization.id,
      target: { type: 'user', id: userId },
      metadata: {
        invitationId: invitation.id,
        email: invitation.email,
        role,
        account,
        ...(joined.length === 0 ? { alreadyMember: true } : {}),
      },
      actor: provenUser(userId, session?.sessionId ?? null),
    });
    return { organization, role, userId, login: session?.tokens ?? null };
  });
  forgetCachedProfile(result.userId);
  return {
    ...toOrganizationDetails(result.organization, result.role),
    login: result.login ? { ...result.login, userProfile: await buildUserProfile(result.userId) } : null,
  };
}
