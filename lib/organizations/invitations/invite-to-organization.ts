import { and, eq, inArray, sql } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { addMonths, now } from '../../clock';
import type { Executor, Tx } from '../../db/client';
import { invitations, organizationMembers } from '../../db/schema/organizations';
import { users } from '../../db/schema/users';
import type { AfterCommit } from '../../db/transaction';
import { queueEmails } from '../../mail/outbox';
import { mailTemplates } from '../../mail/templates';
import { lockAllowances, lockPlanRow } from '../allowances';
import { SeatLimitReachedError } from '../errors';
import type { OrganizationRow } from '../load';
import { type OrganizationRole, roleRank } from '../roles';
import { hashToken, newOpaqueToken } from '../../secrets';

export const INVITATION_TOKEN_PREFIX = 'cebs_inv_';

/** What to do with invitations over the plan's free seats: refuse them all (403), or send those that fit. */
type BeyondSeats = 'refuse' | 'skip';

/**
 * Locks the organization's plan row for the rest of the transaction and checks that the addresses
 * needing a new seat fit. Concurrent invites to one organization queue on the lock, so they cannot
 * overbook. Beyond the free seats: 403, or with `skip` the addresses that do not fit (the last
 * ones given) are returned, to be left out.
 */
export async function reserveSeats(
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
