import { randomBytes } from 'node:crypto';
import type * as z from 'zod/mini';
import { and, asc, desc, eq, ilike, inArray, isNull, ne, or, type SQL, sql } from 'drizzle-orm';
import canonicalize from 'canonicalize';
import { recordAudit } from '../audit';
import { endSessionsOfUser } from '../auth/sessions';
import { ensureProcessorCustomer } from '../billing/customers';
import { whenPaymentsConfigured } from '../billing/processor';
import { billingSummary } from '../billing/summary';
import { now } from '../clock';
import { db, type Executor, type Tx } from '../db/client';
import {
  caseAccess,
  cases,
  devices,
  emailTokens,
  organizationMembers,
  organizationPlans,
  organizations,
  users,
} from '../db/schema';
import { type AfterCommit, transaction } from '../db/transaction';
import { isUniqueViolation } from '../db/errors';
import type { Actor } from '../auth/actor';
import { containsPattern } from '../db/like';
import { idEquals, idIn } from '../ids';
import { invitationsSentWith, inviteToOrganization } from '../invitations';
import { queueEmails } from '../mail/outbox';
import { mailTemplates } from '../mail/templates';
import { pageWindow, toPage } from '../paging';
import type {
  MembersQuery,
  MemberPath,
  UpdateOrganizationUserAccessDto,
  UpdateOrganizationUsersDto,
} from '../../schemas/organization/members';
import type {
  CreateOrganizationDto,
  SlugPath,
  StorageStatsQuery,
  UpdateOrganizationDto,
  UsagesStatQuery,
  ValidateOrganizationNameDto,
} from '../../schemas/organization/organization';
import { forgetCachedProfile } from '../users/profile';
import { planUsageByOrganization, toActivePlanEntity } from './active-plan';
import type { OrganizationContext } from './context';
import {
  EmailChangeNeedsSignInError,
  EmailTakenError,
  LastOwnerError,
  MemberNotFoundError,
  MemberNotOutrankedError,
  MemberOfOtherOrganizationsError,
  NoActivePlanRecordError,
  NotAMemberError,
  NothingToChangeError,
  OrganizationNameTakenError,
  OwnerRoleChangeError,
  SuperAdminAccountError,
  UnknownOrganizationError,
  UserNotMemberError,
} from './errors';
import { loadOrganization, type OrganizationRow } from './load';
import { invitationCounts, toOrganizationDetails, toOrganizationEntity } from './entity';
import { findMembership } from './membership';
import { hasInvisibleCharacters, organizationNameKey } from './name-key';
import { recomputePendingNameKeys } from './pending-name-keys';
import { endMembership } from './end-membership';
import { handOverSoleOwnedCases } from './sole-owned-cases';
import { FREE_PLAN } from './plans';
import { toEnforcedPlanEntity } from '../billing/enforced-plan';
import { type OrganizationRole, roleRank } from './roles';

/** URL-safe slug of a name: lowercase ASCII words joined by dashes. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'organization';
}

/**
 * Whether another organization's name has the same key (NFKC, invisible characters, case and
 * look-alike letters folded: lib/organizations/name-key.ts).
 */
export async function isOrganizationNameTaken(executor: Executor, name: string, exceptId?: string): Promise<boolean> {
  await recomputePendingNameKeys(executor);
  const [row] = await executor
    .select({ id: organizations.id })
    .from(organizations)
    .where(
      and(eq(organizations.nameKey, organizationNameKey(name)), exceptId ? ne(organizations.id, exceptId) : undefined),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * Inserts the organization with `ownerId` as owner, on the free plan, and asks for its
 * payment-processor customer after commit. Returns null when the name is taken (the unique index
 * decides, so two racing requests cannot both get it). A slug clash gets a random suffix.
 */
export async function insertOrganization(
  tx: Executor,
  afterCommit: AfterCommit,
  input: { name: string; ownerId: string; email: string },
): Promise<OrganizationRow | null> {
  const baseSlug = slugify(input.name);
  const nameKey = organizationNameKey(input.name);
  await recomputePendingNameKeys(tx);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const slug = attempt === 0 ? baseSlug : `${baseSlug}-${randomBytes(3).toString('hex')}`;
    const [organization] = await tx
      .insert(organizations)
      .values({ name: input.name, nameKey, slug, email: input.email })
      .onConflictDoNothing()
      .returning();
    if (organization) {
      await tx
        .insert(organizationMembers)
        .values({ organizationId: organization.id, userId: input.ownerId, role: 'owner' });
      const { type, seats, devices, storageBytes } = FREE_PLAN;
      await tx
        .insert(organizationPlans)
        .values({ organizationId: organization.id, type, seats, devices, storageBytes, isActive: true });
      // Without payments configured, maintenance creates the customer once they are.
      afterCommit(() => whenPaymentsConfigured(() => ensureProcessorCustomer(organization.id)));
      return organization;
    }
    if (await isOrganizationNameTaken(tx, input.name)) return null;
  }
  throw new Error('Could not allocate a unique organization slug');
}

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

/** GET /organization/{orgId}: details without the active plan. */
export async function getOrganization({ organization }: { organization: OrganizationContext }) {
  return toOrganizationDetails(await loadOrganization(organization.id), organization.role);
}

/** GET /organization/slug/{slug}: 403 for an unknown slug as for an organization the caller is not in. */
export async function getOrganizationBySlug({ actor }: { actor: Actor }, { slug }: z.output<typeof SlugPath>) {
  const [row] = await db()
    .select({ organization: organizations, role: organizationMembers.role })
    .from(organizations)
    .innerJoin(
      organizationMembers,
      and(eq(organizationMembers.organizationId, organizations.id), eq(organizationMembers.userId, actor.user.id)),
    )
    .where(eq(organizations.slug, slug))
    .limit(1);
  if (!row) throw new NotAMemberError();
  return toOrganizationDetails(row.organization, row.role);
}

/** Columns to write, each a value or an SQL expression over the row being updated. */
type OrganizationChanges = {
  [K in keyof typeof organizations.$inferInsert]?: (typeof organizations.$inferInsert)[K] | SQL;
};

/**
 * The columns that record the bank-linking terms: accepting keeps an acceptance already in force
 * (its time and user; computed from the row being updated, so two concurrent accepts keep the first
 * too), withdrawing clears both.
 */
function bankLinkingTermsChanges(accepted: boolean, userId: string): OrganizationChanges {
  if (!accepted) return { bankLinkingTermsAcceptedAt: null, bankLinkingTermsAcceptedById: null };
  const inForce = sql`${organizations.bankLinkingTermsAcceptedAt} is not null`;
  return {
    bankLinkingTermsAcceptedAt: sql`coalesce(${organizations.bankLinkingTermsAcceptedAt}, ${sql.param(now(), organizations.bankLinkingTermsAcceptedAt)})`,
    bankLinkingTermsAcceptedById: sql`case when ${inForce} then ${organizations.bankLinkingTermsAcceptedById} else ${userId}::uuid end`,
  };
}

/** Fields holding free-form JSON a client may fill with anything: their events name them, never their values. */
const FREE_FORM_FIELDS: ReadonlySet<string> = new Set(['metadata', 'communicationPreferences']);

/** Equal as JSON whatever the key order (a jsonb column answers its keys in its own order). */
const sameValue = (a: unknown, b: unknown) => canonicalize(a ?? null) === canonicalize(b ?? null);

/**
 * PATCH /organization/{orgId}: renaming regenerates the slug; a taken name is 400. Only the fields
 * whose value differs are written, with one `organization.updated` event naming them (none when
 * nothing differs).
 */
export async function updateOrganization(
  { actor, organization }: { actor: Actor; organization: OrganizationContext },
  input: z.output<typeof UpdateOrganizationDto>,
) {
  const { bankLinkingTermsAccepted, ...fields } = input;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await transaction(async (tx) => {
        // Locked, so the event names exactly what this request changed.
        const current = await loadOrganization(organization.id, tx, { lock: true });
        const changes: OrganizationChanges = Object.fromEntries(
          Object.entries(fields).filter(
            ([field, value]) => value !== undefined && !sameValue(value, current[field as keyof OrganizationRow]),
          ),
        );
        const changed: Record<string, unknown> = { ...changes };
        if (
          bankLinkingTermsAccepted !== undefined &&
          bankLinkingTermsAccepted !== (current.bankLinkingTermsAcceptedAt !== null)
        ) {
          Object.assign(changes, bankLinkingTermsChanges(bankLinkingTermsAccepted, actor.user.id));
          changed.bankLinkingTermsAccepted = bankLinkingTermsAccepted;
        }
        if (input.name !== undefined && changes.name !== undefined) {
          if (await isOrganizationNameTaken(tx, input.name, current.id)) throw new OrganizationNameTakenError();
          // A slug taken by another organization's name gets a random suffix on the next attempt.
          changes.slug =
            attempt === 0 ? slugify(input.name) : `${slugify(input.name)}-${randomBytes(3).toString('hex')}`;
          changes.nameKey = organizationNameKey(input.name);
          if (changes.slug !== current.slug) changed.slug = changes.slug;
        }
        if (Object.keys(changes).length === 0) return toOrganizationDetails(current, organization.role);
        const [updated] = await tx
          .update(organizations)
          .set(changes)
          .where(eq(organizations.id, organization.id))
          .returning();
        recordAudit(tx, {
          action: 'organization.updated',
          organizationId: organization.id,
          target: { type: 'organization', id: organization.id },
          metadata: {
            fields: Object.keys(changed),
            changes: Object.fromEntries(Object.entries(changed).filter(([field]) => !FREE_FORM_FIELDS.has(field))),
          },
        });
        return toOrganizationDetails(updated!, organization.role);
      });
    } catch (error) {
      if (isUniqueViolation(error, 'organizations_name_key_key')) throw new OrganizationNameTakenError();
      if (isUniqueViolation(error, 'organizations_slug_key') && input.name !== undefined && attempt < 5) continue;
      throw error;
    }
  }
}

/**
 * POST /organization/validate-name: false when the name cannot be used: another organization's name
 * has the same key (case, invisible characters and look-alike letters folded), or it holds an
 * invisible character (create and rename refuse those).
 */
export async function validateOrganizationName(input: z.output<typeof ValidateOrganizationNameDto>) {
  if (hasInvisibleCharacters(input.name)) return { isValid: false };
  return { isValid: !(await isOrganizationNameTaken(db(), input.name)) };
}

/** GET /organization/user/organizations: every organization of the caller in one page, with its active plan. */
export async function listMyOrganizations({ actor }: { actor: Actor }) {
  const rows = await db()
    .select({ organization: organizations, role: organizationMembers.role })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .where(eq(organizationMembers.userId, actor.user.id))
    .orderBy(asc(organizationMembers.createdAt));
  const usage = await planUsageByOrganization(
    db(),
    rows.map((r) => r.organization.id),
  );
  const records = rows.map(({ organization, role }) => {
    const plan = usage.get(organization.id);
    return {
      organization: toOrganizationEntity(organization, plan ? toActivePlanEntity(plan) : null),
      permission: { role },
      billing: billingSummary(organization),
    };
  });
  return toPage({ offset: 0, size: Math.max(records.length, 1), mode: 'page' }, records.length, records);
}

/** GET /organization/{orgId}/usages-stat: plan allowances and use, and whether the device is new. */
export async function getOrganizationUsage(
  { organization }: { organization: OrganizationContext },
  query: z.output<typeof UsagesStatQuery>,
) {
  const [current, usage, device] = await Promise.all([
    loadOrganization(organization.id),
    planUsageByOrganization(db(), [organization.id]),
    query.deviceId
      ? db()
          .select({ id: devices.id })
          .from(devices)
          .where(and(eq(devices.organizationId, organization.id), eq(devices.deviceId, query.deviceId)))
          .limit(1)
      : Promise.resolve([]),
  ]);
  const plan = usage.get(organization.id);
  if (!plan) throw new NoActivePlanRecordError();
  const entity = toActivePlanEntity(plan);
  return {
    billingModel: current.billingMode,
    planType: entity.type,
    isPlanActive: entity.isActive,
    // A plan with no base fee owed is paid; a failed base fee makes it unpaid until settled.
    isPlanPaid: current.baseFeeFailedAt === null,
    enforcedPlan: toEnforcedPlanEntity(plan.enforced),
    seats: entity.seats,
    seatsUsed: entity.seatsUsed,
    remainingSeats: entity.remainingSeats,
    devices: entity.devices,
    devicesUsed: entity.deviceUsed,
    remainingDevices: entity.remainingDevices,
    storage: entity.storage,
    storageUsed: entity.storageUsed,
    remainingStorage: entity.remainingStorage,
    storageInKb: entity.storageInKb,
    storageUsedInKb: entity.storageUsedInKb,
    storageInMb: entity.storageInMb,
    storageUsedInMb: entity.storageUsedInMb,
    storageInGb: entity.storageInGb,
    storageUsedInGb: entity.storageUsedInGb,
    storageInTb: entity.storageInTb,
    storageUsedInTb: entity.storageUsedInTb,
    canManageBilling: ['owner', 'admin', 'billing'].includes(organization.role),
    isNewDevice: query.deviceId ? device.length === 0 : null,
  };
}

/**
 * GET /organization/{orgId}/storage-stats: live cases only (not archived, not deleted), largest
 * first. A case's storage is what the plan counts of it: its files and the rows derived from them.
 * The breakdown names only the cases the caller may open (any access to the case, as
 * caseWithAccess requires), so a member never learns the names or sizes of the others; the total
 * is the organization's. With `caseIds` the total is of the named cases the caller may open, so
 * asking by id tells nothing about a case they cannot open. One query.
 */
export async function getStorageStats(
  { organization, userId }: { organization: OrganizationContext; userId: string },
  query: z.output<typeof StorageStatsQuery>,
) {
  const caseStorage = sql<number>`${cases.storageBytes} + ${cases.rowBytes}`.mapWith(Number);
  const rows = await db()
    .select({
      caseId: cases.id,
      caseName: cases.name,
      storage: caseStorage,
      opens: sql<boolean>`${caseAccess.access} is not null`,
    })
    .from(cases)
    .leftJoin(caseAccess, and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, userId)))
    .where(
      and(
        eq(cases.organizationId, organization.id),
        isNull(cases.archivedAt),
        isNull(cases.deletedAt),
        // Ids that are not UUIDs match nothing: `caseIds=abc` filters every case out.
        query.caseIds?.length ? idIn(cases.id, query.caseIds) : undefined,
      ),
    )
    .orderBy(desc(caseStorage), asc(cases.name));
  const opened = rows.filter((row) => row.opens).map(({ opens: _, ...row }) => row);
  const counted = query.caseIds?.length ? opened : rows;
  return { totalStorage: counted.reduce((sum, row) => sum + row.storage, 0), cases: opened };
}

/** GET /organization/{orgId}/members: one page and the total, in two queries; `data` null when none match. */
export async function listMembers(
  { organization }: { organization: OrganizationContext },
  query: z.output<typeof MembersQuery>,
) {
  const window = pageWindow(query);
  const pattern = query.searchText ? containsPattern(query.searchText) : undefined;
  const where = and(
    eq(organizationMembers.organizationId, organization.id),
    query.role ? eq(organizationMembers.role, query.role) : undefined,
    pattern ? or(ilike(users.name, pattern), ilike(users.email, pattern)) : undefined,
  );
  const direction = query.sortOrder === 'desc' ? desc : asc;
  const [[totals], rows] = await Promise.all([
    db()
      .select({ total: sql<number>`count(*)::int` })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(where),
    db()
      .select({
        id: users.id,
        name: users.name,
        email: users.email,
        role: organizationMembers.role,
        lastActiveAt: users.lastActiveAt,
      })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(where)
      .orderBy(direction(organizationMembers.createdAt), direction(users.id))
      .limit(window.size)
      .offset(window.offset),
  ]);
  const records = rows.map((row) => ({
    user: { id: row.id, name: row.name, email: row.email },
    role: row.role,
    lastActivityAt: row.lastActiveAt?.toISOString() ?? null,
  }));
  return toPage(window, totals!.total, records, { emptyAsNull: true });
}

/**
 * Serializes the membership changes of one organization (roles, removals) on its row. Without it,
 * two owners demoting or removing each other at the same time each lock only the other's
 * membership, both count two owners, and the organization is left with none.
 */
async function lockMemberships(tx: Executor, organizationId: string): Promise<{ name: string }> {
  const [row] = await tx
    .select({ name: organizations.name })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('no key update');
  if (!row) throw new UnknownOrganizationError();
  return row;
}

/** Only an owner may give or take the owner role, and an organization always keeps one owner. */
async function assertOwnerChangesAllowed(
  tx: Executor,
  organization: OrganizationContext,
  changes: Array<{ userId: string; from: OrganizationRole; to: OrganizationRole }>,
) {
  const touchesOwner = changes.some((c) => c.from !== c.to && (c.from === 'owner' || c.to === 'owner'));
  if (!touchesOwner) return;
  if (organization.role !== 'owner') throw new OwnerRoleChangeError();
  const [owners] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organization.id), eq(organizationMembers.role, 'owner')));
  const demoted = changes.filter((c) => c.from === 'owner' && c.to !== 'owner').length;
  const promoted = changes.filter((c) => c.from !== 'owner' && c.to === 'owner').length;
  if (owners!.n - demoted + promoted < 1) throw new LastOwnerError();
}

/**
 * PATCH /organization/{orgId}/update-user-role: sets the role of the listed members; non-members are
 * skipped. One `organization.member.role_changed` per member whose role differed.
 */
export async function updateUserRoles(
  { organization }: { organization: OrganizationContext },
  input: z.output<typeof UpdateOrganizationUserAccessDto>,
) {
  const updated = await transaction(async (tx) => {
    await lockMemberships(tx, organization.id);
    const members = await tx
      .select({ userId: organizationMembers.userId, role: organizationMembers.role })
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, organization.id), idIn(organizationMembers.userId, input.userIds)),
      )
      .for('update');
    await assertOwnerChangesAllowed(
      tx,
      organization,
      members.map((m) => ({ userId: m.userId, from: m.role, to: input.role })),
    );
    const changed = members.filter((m) => m.role !== input.role);
    if (changed.length === 0) return members.length;
    await tx
      .update(organizationMembers)
      .set({ role: input.role })
      .where(
        and(
          eq(organizationMembers.organizationId, organization.id),
          inArray(
            organizationMembers.userId,
            changed.map((m) => m.userId),
          ),
        ),
      );
    for (const member of changed)
      recordAudit(tx, {
        action: 'organization.member.role_changed',
        organizationId: organization.id,
        target: { type: 'user', id: member.userId },
        metadata: { from: member.role, to: input.role },
      });
    return members.length;
  });
  for (const userId of input.userIds) forgetCachedProfile(userId);
  return { message: `Role ${input.role} set for ${updated} member(s)` };
}

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
 * of entries: one for the roles, one for the accounts, one for the voided links, two for ending
 * sessions, one for the notices.
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
  const values = sql.join(
    changes.accounts.map((change) => sql`(${change.userId}::uuid, ${change.name}::text, ${change.email}::text)`),
    sql`, `,
  );
  await tx.execute(sql`
    update ${users} set
      name = coalesce(changes.name, ${users.name}),
      email = coalesce(changes.email, ${users.email}),
      is_email_verified = case when changes.email is null then ${users.isEmailVerified} else false end,
      email_verified_at = case when changes.email is null then ${users.emailVerifiedAt} else null end,
      updated_at = ${sql.param(now(), users.updatedAt)}
    from (values ${values}) as changes(user_id, name, email)
    where ${users.id} = changes.user_id`);
  const moved = changes.accounts.filter((change) => change.email !== null);
  if (moved.length === 0) return;
  // Links emailed to the old address must not act on the new one.
  await tx.delete(emailTokens).where(
    inArray(
      emailTokens.userId,
      moved.map((change) => change.userId),
    ),
  );
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

/**
 * DELETE /organization/{orgId}/user/{userId}: removes the member, their invitations and case access
 * here; frees the seat. Any member may remove themselves (leave), whatever their role and the plan;
 * removing someone else needs org admin or owner and an active plan. The last owner can neither
 * leave nor be removed (400 LAST_OWNER). Cases the member was the only owner of go to the removing
 * owner, or (self-removal, or an admin removing) the organization's oldest remaining owner, in the
 * same transaction. A fixed number of statements. One `organization.member.removed` event, naming
 * the cases the member lost access to and those handed over.
 */
export async function removeOrganizationUser(
  { actor, organization }: { actor: Actor; organization: OrganizationContext },
  { userId: userIdSent }: z.output<typeof MemberPath>,
) {
  // UUIDs compare case-insensitively; stored ids are lowercase.
  const userId = userIdSent.toLowerCase();
  // Who may remove whom is the route's rule (admin or owner and an active plan, or `self`: lib/http/organization-context.ts).
  const leaving = userId === actor.user.id;
  await transaction(async (tx) => {
    await lockMemberships(tx, organization.id);
    const [member] = await tx
      .select({ role: organizationMembers.role, email: users.email })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(and(eq(organizationMembers.organizationId, organization.id), idEquals(organizationMembers.userId, userId)))
      .for('update');
    // An id that is not a UUID names no member; past this point userId is a member's id.
    if (!member) throw new UserNotMemberError();
    await assertOwnerChangesAllowed(tx, organization, [{ userId, from: member.role, to: 'client' }]);
    const handedOver = await handOverSoleOwnedCases(
      tx,
      organization.id,
      userId,
      !leaving && organization.role === 'owner' ? actor.user.id : null,
    );
    const revoked = await endMembership(tx, organization.id, { userId, email: member.email });
    recordAudit(tx, {
      action: 'organization.member.removed',
      organizationId: organization.id,
      target: { type: 'user', id: userId },
      metadata: {
        email: member.email,
        role: member.role,
        left: leaving,
        // Who may see a case's evidence is part of its custody.
        caseAccessRemoved: revoked,
        casesHandedOver: handedOver,
      },
    });
  });
  forgetCachedProfile(userId);
  return { message: 'The user was removed from the organization' };
}

export { findMembership };
