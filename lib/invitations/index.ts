import { and, asc, desc, eq, gt, ilike, inArray, or, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { type AuditActor, recordAudit, provenUser } from '../audit';
import { canSignIn, type ClientInfo, endSessionsOfUser, openLoginSession } from '../auth/sessions';
import { addMonths, now } from '../clock';
import { db, type Executor, type Tx } from '../db/client';
import { emailTokens, invitations, organizationMembers, organizationPlans, organizations, users } from '../db/schema';
import { type AfterCommit, transaction } from '../db/transaction';
import type * as z from 'zod/mini';
import type {
  AcceptOrganizationInvitationRequestDto,
  InvitationPath,
  InvitationsQuery,
  InviteOrganizationUsersDto,
  PendingInvitationsQuery,
  RejectOrganizationInvitationRequestDto,
} from '../../schemas/organization/members';
import type { OrganizationIdPath } from '../../schemas/organization/organization';
import type { Actor } from '../auth/actor';
import { containsPattern } from '../db/like';
import { idEquals } from '../ids';
import { queueEmails } from '../mail/outbox';
import { mailTemplates } from '../mail/templates';
import { lockAllowances, lockPlanRow } from '../organizations/allowances';
import type { OrganizationContext } from '../organizations/context';
import { toOrganizationDetails, toOrganizationEntity } from '../organizations/entity';
import {
  NoActivePlanError,
  NotAMemberError,
  SeatLimitReachedError,
  UnknownOrganizationError,
} from '../organizations/errors';
import { loadOrganization, type OrganizationRow } from '../organizations/load';
import { findMembership } from '../organizations/membership';
import { ROLES_BY_RANK, type OrganizationRole, roleRank } from '../organizations/roles';
import { type PageWindow, pageWindow, toPage } from '../paging';
import { hashPassword, hashToken, newOpaqueToken } from '../secrets';
import { buildUserProfile, forgetCachedProfile } from '../users/profile';
import {
  AccountJustCreatedError,
  AccountJustDeletedError,
  InvitationAlreadyAcceptedError,
  InvitationExpiredError,
  InvitationNoLongerPendingError,
  InvitationNotPendingError,
  InviteeDetailsRequiredError,
  InviteRoleNotAllowedError,
  UnknownInvitationError,
} from './errors';
import { endEarlierHoldersWork } from './end-earlier-holders-work';

export const INVITATION_TOKEN_PREFIX = 'cebs_inv_';

/** What to do with invitations over the plan's free seats: refuse them all (403), or send those that fit. */
type BeyondSeats = 'refuse' | 'skip';

/**
 * Locks the organization's plan row for the rest of the transaction and checks that the addresses
 * needing a new seat fit. Concurrent invites to one organization queue on the lock, so they cannot
 * overbook. Beyond the free seats: 403, or with `skip` the addresses that do not fit (the last
 * ones given) are returned, to be left out.
 */
async function reserveSeats(
  tx: Executor,
  organizationId: string,
  needingSeats: string[],
  beyondSeats: BeyondSeats,
): Promise<string[]> {
  const usage = await lockAllowances(tx, organizationId);
  const free = Math.max(0, usage.plan.seats - usage.seatsUsed);
  if (needingSeats.length <= free) return [];
  if (beyondSeats === 'skip') return needingSeats.slice(free);
  throw new SeatLimitReachedError(usage, needingSeats.length);
}

interface InviteInput {
  organization: OrganizationRow;
  inviter: { id: string; name: string } | null;
  emails: string[];
  role: OrganizationRole;
  /** Default `refuse`. */
  beyondSeats?: BeyondSeats;
}

/** One invitation `inviteToOrganization` wrote: what its audit event says. */
export interface WrittenInvitation {
  id: string;
  email: string;
  role: OrganizationRole;
  /** A live invitation re-invited: it keeps its emailed link (a reminder is sent), its role possibly raised from this. */
  previousRole: OrganizationRole | null;
  /** The existing, verified account added at once (auto-accept); null when only invited. */
  addedUserId: string | null;
}

/**
 * Addresses invited (emailed), added at once (auto-accept), and left out for lack of seats
 * (`skip` only); the invitations written, for the caller's audit event.
 */
export interface InviteOutcome {
  invited: string[];
  added: string[];
  notSent: string[];
  written: WrittenInvitation[];
}

const nothingInvited = (notSent: string[] = []): InviteOutcome => ({ invited: [], added: [], notSent, written: [] });

/** The higher ranked of two roles. */
const higherRole = (a: OrganizationRole, b: OrganizationRole): OrganizationRole => (roleRank(a) >= roleRank(b) ? a : b);

/**
 * Invites each address that is not yet a member, within the plan's seats (403 otherwise).
 *
 * - A new address, or one whose invitation expired, was rejected or accepted earlier: a pending
 *   invitation with a new one-month token, emailed.
 * - An address with a pending, unexpired invitation: the invitation keeps its token (the link
 *   already emailed stays valid), its expiry and its inviter; its role becomes the higher of the
 *   two, so re-inviting never lowers a role the caller could not have granted. A reminder without
 *   a link is emailed (the resend route issues a new link).
 * - With auto-accept on, an existing user whose address is verified is added at once (with the
 *   higher role when a pending invitation exists). An unverified account is never attached: it
 *   gets the invitation email, and accepting it proves the mailbox (see acceptInvitation).
 *
 * Tokens are stored hashed; the emails leave through the outbox after commit. The caller records
 * the audit event (each route records its own action: `recordInvitations` for the invite route).
 */
export async function inviteToOrganization(
  tx: Executor,
  afterCommit: AfterCommit,
  input: InviteInput,
): Promise<InviteOutcome> {
  const addresses = [...new Set(input.emails.map((e) => e.toLowerCase()))];
  if (addresses.length === 0) return nothingInvited();
  const organizationId = input.organization.id;
  // Lock before reading what holds seats, so a concurrent delete, reject or resend cannot change it.
  await lockPlanRow(tx, organizationId);
  // Locked too, so a concurrent accept of one of them is either seen here or waits for this change.
  const earlier = await tx
    .select({
      email: invitations.email,
      role: invitations.role,
      status: invitations.status,
      tokenHash: invitations.tokenHash,
      expiresAt: invitations.expiresAt,
      invitedById: invitations.invitedById,
      invitedUserId: invitations.invitedUserId,
    })
    .from(invitations)
    .where(and(eq(invitations.organizationId, organizationId), inArray(invitations.email, addresses)))
    .for('update');
  const [existingUsers, members] = await Promise.all([
    tx
      .select({ id: users.id, email: users.email, name: users.name, isEmailVerified: users.isEmailVerified })
      .from(users)
      .where(inArray(users.email, addresses)),
    tx
      .select({ email: users.email })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(and(eq(organizationMembers.organizationId, organizationId), inArray(users.email, addresses))),
  ]);
  const memberEmails = new Set(members.map((m) => m.email));
  const nonMembers = addresses.filter((email) => !memberEmails.has(email));
  if (nonMembers.length === 0) return nothingInvited();

  const at = now();
  // A pending, unexpired invitation already holds its seat (and its emailed link stays valid).
  const live = new Map(earlier.filter((i) => i.status === 'pending' && i.expiresAt > at).map((i) => [i.email, i]));
  const notSent = await reserveSeats(
    tx,
    organizationId,
    nonMembers.filter((email) => !live.has(email)),
    input.beyondSeats ?? 'refuse',
  );
  const candidates = nonMembers.filter((email) => !notSent.includes(email));
  if (candidates.length === 0) return nothingInvited(notSent);

  const userByEmail = new Map(existingUsers.map((u) => [u.email, u]));
  const autoAdded = input.organization.autoAcceptInvitations
    ? candidates.filter((email) => userByEmail.get(email)?.isEmailVerified === true)
    : [];
  const roleOf = (email: string): OrganizationRole => {
    const pending = live.get(email);
    return pending ? higherRole(pending.role, input.role) : input.role;
  };
  // A fresh token for every invitation that does not keep its live one (auto-added ones get one too: never emailed).
  const tokens = new Map(
    candidates
      .filter((email) => !live.has(email) || autoAdded.includes(email))
      .map((email) => [email, newOpaqueToken(INVITATION_TOKEN_PREFIX)]),
  );

  const written = await tx
    .insert(invitations)
    .values(
      candidates.map((email) => {
        const added = autoAdded.includes(email);
        const kept = added ? undefined : live.get(email);
        return {
          organizationId,
          email,
          role: roleOf(email),
          status: added ? ('accepted' as const) : ('pending' as const),
          tokenHash: kept ? kept.tokenHash : hashToken(tokens.get(email)!),
          expiresAt: kept ? kept.expiresAt : addMonths(at, 1),
          invitedById: kept ? kept.invitedById : (input.inviter?.id ?? null),
          invitedUserId: userByEmail.get(email)?.id ?? kept?.invitedUserId ?? null,
          acceptedById: added ? userByEmail.get(email)!.id : null,
        };
      }),
    )
    .onConflictDoUpdate({
      target: [invitations.organizationId, invitations.email],
      set: {
        role: sql`excluded.role`,
        status: sql`excluded.status`,
        tokenHash: sql`excluded.token_hash`,
        expiresAt: sql`excluded.expires_at`,
        invitedById: sql`excluded.invited_by_id`,
        invitedUserId: sql`excluded.invited_user_id`,
        acceptedById: sql`excluded.accepted_by_id`,
        rejectionReason: null,
        updatedAt: at,
      },
    })
    .returning({ id: invitations.id, email: invitations.email });
  const invitationIdOf = new Map(written.map((row) => [row.email, row.id]));
  if (autoAdded.length > 0) {
    await tx
      .insert(organizationMembers)
      .values(autoAdded.map((email) => ({ organizationId, userId: userByEmail.get(email)!.id, role: roleOf(email) })))
      .onConflictDoNothing();
  }

  const invited = candidates.filter((email) => !autoAdded.includes(email));
  const inviterName = input.inviter?.name ?? null;
  await queueEmails(tx, afterCommit, [
    ...invited.map((email) => {
      const kept = live.get(email);
      return kept
        ? mailTemplates.invitationReminder(email, input.organization.name, inviterName, kept.expiresAt)
        : mailTemplates.invitation(email, input.organization.name, organizationId, inviterName, tokens.get(email)!);
    }),
    ...autoAdded.map((email) => mailTemplates.addedToOrganization(email, input.organization.name, inviterName)),
  ]);
  return {
    invited,
    added: autoAdded,
    notSent,
    written: candidates.map((email) => {
      const added = autoAdded.includes(email);
      return {
        id: invitationIdOf.get(email)!,
        email,
        role: roleOf(email),
        previousRole: added ? null : (live.get(email)?.role ?? null),
        addedUserId: added ? userByEmail.get(email)!.id : null,
      };
    }),
  };
}

/** The metadata an invitation's audit event carries: never its token. */
const invitationAuditFields = (invitation: WrittenInvitation) => ({
  email: invitation.email,
  role: invitation.role,
  ...(invitation.previousRole ? { reminder: true, previousRole: invitation.previousRole } : {}),
  ...(invitation.addedUserId ? { autoAccepted: true, userId: invitation.addedUserId } : {}),
});

/**
 * The invitations sent with an organization's creation (or a registration), named in that one
 * event's metadata: they are part of it, not `organization.member.invited` events of their own.
 */
export const invitationsSentWith = (outcome: InviteOutcome) => ({
  invitations: outcome.written.map((invitation) => ({ id: invitation.id, ...invitationAuditFields(invitation) })),
  invitationsNotSent: outcome.notSent,
});

/** One `organization.member.invited` per invitation written, its target the invitation. */
export function recordInvitations(tx: Tx, organizationId: string, outcome: InviteOutcome): void {
  for (const invitation of outcome.written)
    recordAudit(tx, {
      action: 'organization.member.invited',
      organizationId,
      target: { type: 'invitation', id: invitation.id },
      metadata: invitationAuditFields(invitation),
    });
}

/** Roles an inviter may hand out: a plain member only client or member; others up to their own rank. */
function assertMayInvite(inviterRole: OrganizationRole, role: OrganizationRole): void {
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

const invitedBy = alias(users, 'invited_by');
const invitedUser = alias(users, 'invited_user');
const acceptedBy = alias(users, 'accepted_by');

const personOf = (row: { id: string; name: string; email: string } | null) =>
  row ? { id: row.id, name: row.name, email: row.email } : null;

type InvitationListQuery = z.output<typeof InvitationsQuery>;

/** One page of invitations with inviting, invited and accepting users and the organization: two queries. */
async function pageOfInvitations(filters: SQL[], query: InvitationListQuery, window: PageWindow) {
  const where = and(...filters);
  const sortColumn = { createdAt: invitations.createdAt, updatedAt: invitations.updatedAt, email: invitations.email }[
    query.sortBy ?? 'updatedAt'
  ];
  // "Most recently updated first" unless the caller asks for an order.
  const direction = (query.sortOrder ?? 'desc') === 'asc' ? asc : desc;
  const [[totals], rows] = await Promise.all([
    // Joined like the page query: `searchText` also matches the organization's name.
    db()
      .select({ total: sql<number>`count(*)::int` })
      .from(invitations)
      .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
      .where(where),
    db()
      .select({ invitation: invitations, organization: organizations, invitedBy, invitedUser, acceptedBy })
      .from(invitations)
      .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
      .leftJoin(invitedBy, eq(invitedBy.id, invitations.invitedById))
      .leftJoin(invitedUser, eq(invitedUser.id, invitations.invitedUserId))
      .leftJoin(acceptedBy, eq(acceptedBy.id, invitations.acceptedById))
      .where(where)
      .orderBy(direction(sortColumn), direction(invitations.id))
      .limit(window.size)
      .offset(window.offset),
  ]);
  const records = rows.map((row) => ({
    id: row.invitation.id,
    email: row.invitation.email,
    role: row.invitation.role,
    status: row.invitation.status,
    expiresAt: row.invitation.expiresAt.toISOString(),
    invitedBy: personOf(row.invitedBy),
    invitedUser: personOf(row.invitedUser),
    acceptedBy: personOf(row.acceptedBy),
    organization: toOrganizationEntity(row.organization),
    createdAt: row.invitation.createdAt.toISOString(),
    updatedAt: row.invitation.updatedAt.toISOString(),
  }));
  return toPage(window, totals!.total, records, { emptyAsNull: true });
}

function commonFilters(query: InvitationListQuery): SQL[] {
  const filters: SQL[] = [];
  if (query.status) filters.push(eq(invitations.status, query.status));
  if (query.userRole) filters.push(eq(invitations.role, query.userRole));
  if (query.searchText) {
    const pattern = containsPattern(query.searchText);
    filters.push(or(ilike(invitations.email, pattern), ilike(organizations.name, pattern))!);
  }
  return filters;
}

/** GET /organization/invitations: invitations of the caller's organizations (or the one given). */
export async function listInvitations({ actor }: { actor: Actor }, query: InvitationListQuery) {
  const mine = db()
    .select({ id: organizationMembers.organizationId })
    .from(organizationMembers)
    .where(eq(organizationMembers.userId, actor.user.id));
  const filters = commonFilters(query);
  if (query.organization) {
    // An id that is not a UUID names no organization of the caller: 403 like any other.
    if (!(await findMembership(query.organization, actor.user.id))) throw new NotAMemberError();
    filters.push(idEquals(invitations.organizationId, query.organization));
  } else {
    filters.push(inArray(invitations.organizationId, mine));
  }
  return pageOfInvitations(filters, query, pageWindow(query));
}

/** GET /organization/pending-invitations: the caller's own pending, unexpired invitations. */
export async function listPendingInvitations(
  { actor }: { actor: Actor },
  query: z.output<typeof PendingInvitationsQuery>,
) {
  // Invitations belong to whoever proves the mailbox: an account that has not verified its address
  // sees none (who invites the address, and from where, is not a registrant's to read).
  if (!actor.user.isEmailVerified) return toPage(pageWindow(query), 0, [], { emptyAsNull: true });
  const filters = [
    ...commonFilters({ ...query, status: 'pending' }),
    eq(invitations.email, actor.user.email),
    gt(invitations.expiresAt, now()),
  ];
  if (query.organization) filters.push(idEquals(invitations.organizationId, query.organization));
  return pageOfInvitations(filters, query, pageWindow(query));
}

async function findInvitation(executor: Executor, organizationId: string, invitationId: string) {
  const [invitation] = await executor
    .select()
    .from(invitations)
    .where(and(idEquals(invitations.id, invitationId), eq(invitations.organizationId, organizationId)))
    .limit(1)
    .for('update');
  if (!invitation) throw new UnknownInvitationError();
  return invitation;
}

/** DELETE /organization/{orgId}/invitation/{invitationId}: pending only (400 otherwise); frees its seat. */
export async function deleteInvitation(
  { organization }: { organization: OrganizationContext },
  { invitationId }: z.output<typeof InvitationPath>,
) {
  return transaction(async (tx) => {
    const invitation = await findInvitation(tx, organization.id, invitationId);
    if (invitation.status !== 'pending') throw new InvitationNotPendingError(invitation.status);
    await tx.delete(invitations).where(eq(invitations.id, invitation.id));
    recordAudit(tx, {
      action: 'organization.invitation.deleted',
      organizationId: organization.id,
      target: { type: 'invitation', id: invitation.id },
      metadata: { email: invitation.email, role: invitation.role },
    });
    return { message: `Invitation to ${invitation.email} deleted` };
  });
}

/** POST .../resend: new one-month token and email; a rejected invitation becomes pending again (and takes a seat). */
export async function resendInvitation(
  { organization, actor }: { organization: OrganizationContext; actor: Actor },
  { invitationId }: z.output<typeof InvitationPath>,
) {
  return transaction(async (tx, afterCommit) => {
    await lockPlanRow(tx, organization.id);
    const invitation = await findInvitation(tx, organization.id, invitationId);
    if (invitation.status === 'accepted') throw new InvitationAlreadyAcceptedError();
    assertMayInvite(organization.role, invitation.role);
    const holdsSeat = invitation.status === 'pending' && invitation.expiresAt > now();
    await reserveSeats(tx, organization.id, holdsSeat ? [] : [invitation.email], 'refuse');
    const token = newOpaqueToken(INVITATION_TOKEN_PREFIX);
    await tx
      .update(invitations)
      .set({
        status: 'pending',
        tokenHash: hashToken(token),
        expiresAt: addMonths(now(), 1),
        rejectionReason: null,
        invitedById: actor.user.id,
      })
      .where(eq(invitations.id, invitation.id));
    recordAudit(tx, {
      action: 'organization.invitation.resent',
      organizationId: organization.id,
      target: { type: 'invitation', id: invitation.id },
      metadata: {
        email: invitation.email,
        role: invitation.role,
        previousStatus: holdsSeat ? 'pending' : invitation.status === 'pending' ? 'expired' : invitation.status,
      },
    });
    const org = await loadOrganization(organization.id, tx);
    await queueEmails(tx, afterCommit, [
      mailTemplates.invitation(invitation.email, org.name, org.id, actor.user.name, token),
    ]);
    return { message: `Invitation sent again to ${invitation.email}` };
  });
}

/** The invitation of an emailed token, checked against the organization and email; 404/400 per the contract. */
async function invitationForToken(tx: Executor, organizationId: string, token: string, email: string) {
  const [invitation] = await tx
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.tokenHash, hashToken(token)),
        eq(invitations.organizationId, organizationId),
        eq(invitations.email, email),
      ),
    )
    .limit(1)
    .for('update');
  if (!invitation) throw new UnknownInvitationError();
  if (invitation.status !== 'pending') throw new InvitationNoLongerPendingError(invitation.status);
  if (invitation.expiresAt <= now()) throw new InvitationExpiredError();
  return invitation;
}

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
      const [created] = await tx
        .insert(users)
        .values({ email: input.email, name: input.name!, passwordHash, isEmailVerified: true, emailVerifiedAt: now() })
        .onConflictDoNothing()
        .returning({ id: users.id });
      if (!created) throw new AccountJustCreatedError();
      userId = created.id;
      signIn = true;
      account = 'created';
    } else if (isTakeover(current)) {
      // Registered meanwhile without proof of the mailbox: taken over like one found unverified above.
      if (!passwordHash) throw new InviteeDetailsRequiredError(true);
      await tx
        .update(users)
        .set({
          name: input.name!,
          passwordHash,
          isEmailVerified: true,
          emailVerifiedAt: now(),
          // What the earlier holder stated about themselves is not the acceptor's: as for a new invitee.
          phoneNumbers: [],
          onboardingStatus: 'not_started',
          onboardingStep: 0,
          userType: null,
          termsAcceptedAt: null,
          termsVersion: null,
          updatedAt: now(),
        })
        .where(eq(users.id, current.id));
      await endSessionsOfUser(tx, current.id);
      // Verification and reset links of the earlier holder die with the account's past.
      await tx.delete(emailTokens).where(eq(emailTokens.userId, current.id));
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

/** POST .../invitation/reject (no auth): marks it rejected (freeing its seat) and tells the organization. */
export async function rejectInvitation(
  input: z.output<typeof OrganizationIdPath> & z.output<typeof RejectOrganizationInvitationRequestDto>,
): Promise<void> {
  const organizationId = input.orgId;
  await transaction(async (tx, afterCommit) => {
    const organization = await loadOrganization(organizationId, tx);
    const invitation = await invitationForToken(tx, organization.id, input.token, input.email);
    await tx
      .update(invitations)
      .set({ status: 'rejected', rejectionReason: input.reason ?? null })
      .where(eq(invitations.id, invitation.id));
    // The emailed token proves the mailbox; a verified account of that address is who acts.
    const [addressee] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.email, invitation.email), eq(users.isEmailVerified, true)))
      .limit(1);
    const actor: AuditActor | undefined = addressee ? provenUser(addressee.id) : undefined;
    recordAudit(tx, {
      action: 'organization.invitation.rejected',
      organizationId: organization.id,
      target: { type: 'invitation', id: invitation.id },
      metadata: { email: invitation.email, role: invitation.role, reason: input.reason ?? null },
      actor,
    });
    const recipients = await tx
      .select({ email: users.email })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(
        and(
          eq(organizationMembers.organizationId, organization.id),
          inArray(organizationMembers.role, ['owner', 'admin']),
        ),
      );
    const addresses = new Set([...recipients.map((r) => r.email), ...(organization.email ? [organization.email] : [])]);
    await queueEmails(
      tx,
      afterCommit,
      [...addresses].map((to) =>
        mailTemplates.invitationRejected(to, organization.name, invitation.email, input.reason ?? null),
      ),
    );
  });
}
