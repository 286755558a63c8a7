import type * as z from 'zod/mini';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { recordAudit } from '../audit/record';
import { endSessionsOfUser } from '../auth/sessions';
import type { Executor, Tx } from '../db/client';
import { organizationMembers } from '../db/schema/organizations';
import { users } from '../db/schema/users';
import { type AfterCommit, transaction } from '../db/transaction';
import type { Actor } from '../auth/actor';
import { idIn } from '../ids';
import { queueEmails } from '../mail/outbox';
import { mailTemplates } from '../mail/templates';
import type { UpdateOrganizationUsersDto } from '../../schemas/organization/members';
import { forgetCachedProfile } from '../users/profile';
import { updateMemberDetails } from '../users/update-member-details';
import type { OrganizationContext } from './context';
import {
  EmailChangeNeedsSignInError,
  EmailTakenError,
  MemberNotFoundError,
  MemberNotOutrankedError,
  MemberOfOtherOrganizationsError,
  NothingToChangeError,
  SuperAdminAccountError,
} from './errors';
import { type OrganizationRole, roleRank } from './roles';
import { assertOwnerChangesAllowed, lockMemberships } from './membership-changes';

type MemberUpdate = z.output<typeof UpdateOrganizationUsersDto>['users'][number];

/** The fields of an update entry that were given (an absent field must not overwrite an earlier entry's). */
const definedFields = (entry: MemberUpdate): MemberUpdate =>
  Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)) as MemberUpdate;

/** A member named by an update entry, as read under the lock. */
interface LockedMember {
  userId: string;
  role: OrganizationRole;
  email: string;
  name: string;
  isSuperAdmin: boolean;
  otherOrganizations: number;
}

/** What `validateMemberUpdates` found allowed: the writes `applyMemberUpdates` makes. */
interface MemberChanges {
  roles: Array<{ userId: string; role: OrganizationRole }>;
  accounts: Array<{ userId: string; name: string | null; email: string | null; before: LockedMember }>;
}

/**
 * PATCH /organization/{orgId}/user: all or nothing, in one transaction (any refusal applies none of
 * the entries). Name and email change the account itself, so:
 * - only for members who belong to no other organization (403 MEMBER_OF_OTHER_ORGANIZATIONS);
 * - only for members ranked below the caller, by the higher of their current and requested role
 *   (an owner may change an admin's, an admin neither another admin's nor an owner's; nobody their
 *   own here: PATCH /user/profile is for that) and never a super admin's (403 INSUFFICIENT_ROLE);
 * - the login email only from a signed-in session, never with an automation or legacy token
 *   (403 FORBIDDEN): whoever sets the address can reset the password and own the account.
 * A changed login email ends every session and token of that member and is notified to the old
 * address (queued in the same transaction, sent after commit).
 */
export async function updateOrganizationUsers(
  ctx: { actor: Actor; organization: OrganizationContext },
  input: z.output<typeof UpdateOrganizationUsersDto>,
) {
  // UUIDs compare case-insensitively; stored ids are lowercase, and the entries are matched to them below.
  const entries = input.users.map((entry) => ({ ...entry, userId: entry.userId.toLowerCase() }));
  const empty = entries.findIndex(
    (entry) => entry.role === undefined && entry.name === undefined && entry.email === undefined,
  );
  if (empty >= 0) throw new NothingToChangeError(empty);
  const userIds = [...new Set(entries.map((entry) => entry.userId))];
  await transaction(async (tx, afterCommit) => {
    const { name: organizationName } = await lockMemberships(tx, ctx.organization.id);
    const members = await tx
      .select({
        userId: organizationMembers.userId,
        role: organizationMembers.role,
        email: users.email,
        name: users.name,
        isSuperAdmin: users.isSuperAdmin,
        // Table-qualified on purpose: inside a select list drizzle renders a bare column name,
        // which the subquery would resolve to its own alias.
        otherOrganizations: sql<number>`(select count(*)::int from organization_members other where other.user_id = organization_members.user_id and other.organization_id <> ${ctx.organization.id})`,
      })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(
        and(eq(organizationMembers.organizationId, ctx.organization.id), idIn(organizationMembers.userId, userIds)),
      )
      .for('update', { of: organizationMembers });
    const changes = await validateMemberUpdates(tx, ctx, entries, members);
    await applyMemberUpdates(tx, afterCommit, ctx.organization.id, organizationName, changes);
    recordMemberUpdates(tx, ctx.organization.id, members, changes);
  });
  for (const userId of userIds) forgetCachedProfile(userId);
  return { message: `${userIds.length} member(s) updated` };
}

/**
 * The rules of `updateOrganizationUsers`, checked against the locked members: throws the first
 * refusal, else returns the role and account changes (entries for the same member merged, later
 * fields winning; re-sent values that change nothing left out).
 */
async function validateMemberUpdates(
  tx: Executor,
  { actor, organization }: { actor: Actor; organization: OrganizationContext },
  entries: MemberUpdate[],
  members: LockedMember[],
): Promise<MemberChanges> {
  const byId = new Map(members.map((m) => [m.userId, m]));
  // From here on every entry names a member: its userId is a stored UUID (safe to cast below).
  const missing = entries.map((entry) => entry.userId).find((id) => !byId.has(id));
  if (missing) throw new MemberNotFoundError(missing);
  // Only a real change counts: re-sending the name or email the account already has (a client
  // re-sending the whole form) must not make a role change of a multi-organization member a 403.
  const changesName = (entry: MemberUpdate) => entry.name !== undefined && entry.name !== byId.get(entry.userId)!.name;
  const changesEmail = (entry: MemberUpdate) =>
    entry.email !== undefined && entry.email !== byId.get(entry.userId)!.email;
  const accountEntries = entries.filter((entry) => changesName(entry) || changesEmail(entry));
  const accountChange = accountEntries.find((entry) => byId.get(entry.userId)!.otherOrganizations > 0);
  if (accountChange) throw new MemberOfOtherOrganizationsError(accountChange.userId);
  if (actor.session.kind !== 'login' && entries.some(changesEmail)) throw new EmailChangeNeedsSignInError();
  const superAdmin = accountEntries.find((entry) => byId.get(entry.userId)!.isSuperAdmin);
  if (superAdmin) throw new SuperAdminAccountError(superAdmin.userId);
  // The rank that counts is the higher of the member's role now and any role this request gives them.
  const outranked = accountEntries.find((entry) => {
    const requested = entries
      .filter((other) => other.userId === entry.userId && other.role !== undefined)
      .map((other) => roleRank(other.role!));
    return Math.max(roleRank(byId.get(entry.userId)!.role), ...requested) >= roleRank(organization.role);
  });
  if (outranked) throw new MemberNotOutrankedError(outranked.userId);
  const newEmails = entries.filter((entry) => entry.email !== undefined);
  if (newEmails.length > 0) {
    const taken = await tx
      .select({ id: users.id, email: users.email })
      .from(users)
      .where(
        inArray(
          users.email,
          newEmails.map((entry) => entry.email!),
        ),
      );
    const clash = taken.find((account) =>
      newEmails.some((entry) => entry.email === account.email && entry.userId !== account.id),
    );
    if (clash || new Set(newEmails.map((e) => e.email)).size < newEmails.length)
      throw new EmailTakenError(clash?.email);
  }
  await assertOwnerChangesAllowed(
    tx,
    organization,
    entries
      .filter((entry) => entry.role)
      .map((entry) => ({ userId: entry.userId, from: byId.get(entry.userId)!.role, to: entry.role! })),
  );
  const merged = [
    ...entries
      .reduce(
        (all, entry) => all.set(entry.userId, { ...all.get(entry.userId), ...definedFields(entry) }),
        new Map<string, MemberUpdate>(),
      )
      .values(),
  ];
  return {
    roles: merged
      .filter((entry) => entry.role !== undefined && entry.role !== byId.get(entry.userId)!.role)
      .map((entry) => ({ userId: entry.userId, role: entry.role! })),
    // Sending the name or address the account already has (a client re-sending the whole form)
    // is no change: the account stays verified and its emailed links stay valid.
    accounts: merged
      .map((entry) => {
        const before = byId.get(entry.userId)!;
        return {
          userId: entry.userId,
          name: entry.name !== undefined && entry.name !== before.name ? entry.name : null,
          email: entry.email !== undefined && entry.email !== before.email ? entry.email : null,
          before,
        };
      })
      .filter((change) => change.name !== null || change.email !== null),
  };
}

/**
 * One `organization.member.updated` per member whose role, name or email changed: which fields,
 * each from and to (none of them secret).
 */
function recordMemberUpdates(tx: Tx, organizationId: string, members: LockedMember[], changes: MemberChanges): void {
  const fieldsOf = new Map<string, Record<string, { from: string; to: string }>>();
  const fieldsOfMember = (userId: string) => fieldsOf.get(userId) ?? fieldsOf.set(userId, {}).get(userId)!;
  const byId = new Map(members.map((m) => [m.userId, m]));
  for (const { userId, role } of changes.roles)
    fieldsOfMember(userId).role = { from: byId.get(userId)!.role, to: role };
  for (const { userId, name, email, before } of changes.accounts) {
    if (name !== null) fieldsOfMember(userId).name = { from: before.name, to: name };
    if (email !== null) fieldsOfMember(userId).email = { from: before.email, to: email };
  }
  for (const [userId, fields] of fieldsOf)
    recordAudit(tx, {
      action: 'organization.member.updated',
      organizationId,
      target: { type: 'user', id: userId },
      metadata: { fields: Object.keys(fields), changes: fields },
    });
}

/**
 * Writes what `validateMemberUpdates` allowed, in a fixed number of statements whatever the number
 * of entries: one for the roles, two for the accounts and their voided links (lib/users), two for
 * ending sessions, one for the notices.
 */
async function applyMemberUpdates(
  tx: Executor,
  afterCommit: AfterCommit,
  organizationId: string,
  organizationName: string,
  changes: MemberChanges,
): Promise<void> {
  if (changes.roles.length > 0) {
    const roleOf = sql.join(
      changes.roles.map((entry) => sql`when ${entry.userId}::uuid then ${entry.role}`),
      sql` `,
    );
    await tx
      .update(organizationMembers)
      .set({ role: sql`(case ${organizationMembers.userId} ${roleOf} end)` })
      .where(
        and(
          eq(organizationMembers.organizationId, organizationId),
          inArray(
            organizationMembers.userId,
            changes.roles.map((entry) => entry.userId),
          ),
        ),
      );
  }
  if (changes.accounts.length === 0) return;
  // The accounts are lib/users' to write: names, emails, and the links emailed to a moved address.
  await updateMemberDetails(tx, afterCommit, changes.accounts);
  const moved = changes.accounts.filter((change) => change.email !== null);
  if (moved.length === 0) return;
  // Whoever held the account before keeps nothing: every session and token ends.
  await endSessionsOfUser(
    tx,
    moved.map((change) => change.userId),
  );
  await queueEmails(
    tx,
    afterCommit,
    moved.map(({ before, name, email }) =>
      mailTemplates.loginEmailChanged(before.email, name ?? before.name, organizationName, email!),
    ),
  );
}
