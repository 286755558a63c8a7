import { and, asc, count, desc, eq, isNull } from 'drizzle-orm';
import { now } from '../clock';
import { db } from '../db/client';
import { caseAccess, cases, organizationMembers } from '../db/schema';
import { transaction } from '../db/transaction';
import { BadRequestError, ForbiddenError, NotFoundError } from '../http/errors';
import type { Actor, OrganizationContext } from '../http/types';
import { idEquals } from '../ids';
import { pageWindow, type PagingInput, toPage } from '../paging';
import { assertCaseRule, type CaseAccessLevel, caseWithAccess } from './access';
import { CASE_RULES } from './rules';

type CaseRow = typeof cases.$inferSelect;

/** The Case extension entity, with the caller's access. */
export function toCaseEntity(row: CaseRow, access: CaseAccessLevel | null) {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    isPro: row.isPro,
    archivedAt: row.archivedAt?.toISOString() ?? null,
    deletedAt: row.deletedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    access,
  };
}

/** POST /cases: a case in the header's organization; the creator gets owner access. */
export async function createCase(organization: OrganizationContext, actor: Actor, input: { name: string }) {
  const created = await transaction(async (tx) => {
    const [row] = await tx.insert(cases).values({ organizationId: organization.id, name: input.name }).returning();
    await tx.insert(caseAccess).values({ caseId: row!.id, userId: actor.user.id, access: 'owner' });
    return row!;
  });
  return toCaseEntity(created, 'owner');
}

/** GET /cases: the cases of the organization the caller has access to, newest first. */
export async function listCases(
  organization: OrganizationContext,
  actor: Actor,
  query: PagingInput & { includeArchived?: boolean; sortOrder?: 'asc' | 'desc' },
) {
  const window = pageWindow(query);
  const where = and(
    eq(cases.organizationId, organization.id),
    isNull(cases.deletedAt),
    query.includeArchived ? undefined : isNull(cases.archivedAt),
  );
  const direction = query.sortOrder === 'asc' ? asc : desc;
  const [rows, [totals]] = await Promise.all([
    db()
      .select({ case: cases, access: caseAccess.access })
      .from(cases)
      .innerJoin(caseAccess, and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, actor.user.id)))
      .where(where)
      .orderBy(direction(cases.createdAt), direction(cases.id))
      .limit(window.size)
      .offset(window.offset),
    db()
      .select({ total: count() })
      .from(cases)
      .innerJoin(caseAccess, and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, actor.user.id)))
      .where(where),
  ]);
  return toPage(
    window,
    totals!.total,
    rows.map((r) => toCaseEntity(r.case, r.access)),
  );
}

/** GET /cases/{caseId} */
export async function getCase(organization: OrganizationContext, actor: Actor, caseId: string) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  return toCaseEntity(found.case, found.access);
}

/** PATCH /cases/{caseId}: rename, archive (archived: true) or restore (false). */
export async function updateCase(
  organization: OrganizationContext,
  actor: Actor,
  caseId: string,
  input: { name?: string; archived?: boolean },
) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  assertCaseRule(found, CASE_RULES.manage, 'Owner or admin access to the case is required');
  const changes: Partial<typeof cases.$inferInsert> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.archived !== undefined) changes.archivedAt = input.archived ? (found.case.archivedAt ?? now()) : null;
  if (Object.keys(changes).length === 0) return toCaseEntity(found.case, found.access);
  const [updated] = await db().update(cases).set(changes).where(eq(cases.id, found.case.id)).returning();
  return toCaseEntity(updated!, found.access);
}

/** DELETE /cases/{caseId}: soft delete (the evidence stays, the case disappears from every list). */
export async function deleteCase(organization: OrganizationContext, actor: Actor, caseId: string) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  assertCaseRule(found, CASE_RULES.delete, 'Only the case owner or an organization owner or admin may delete a case');
  await db().update(cases).set({ deletedAt: now() }).where(eq(cases.id, found.case.id));
  return { message: `Case "${found.case.name}" deleted` };
}

/** PUT /cases/{caseId}/access/{userId}: grant or change a member's access; only an owner grants owner. */
export async function grantCaseAccess(
  organization: OrganizationContext,
  actor: Actor,
  caseId: string,
  userId: string,
  access: CaseAccessLevel,
) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  assertCaseRule(found, CASE_RULES.manage, 'Owner or admin access to the case is required');
  if (access === 'owner' && found.access !== 'owner' && found.orgRole !== 'owner') {
    throw new ForbiddenError('Only a case owner may grant owner access', 'INSUFFICIENT_ROLE');
  }
  const [member] = await db()
    .select({ userId: organizationMembers.userId })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organization.id), idEquals(organizationMembers.userId, userId)));
  if (!member) throw new NotFoundError('This user is not a member of the organization');
  const granted = { caseId: found.case.id, userId: member.userId, access };
  await transaction(async (tx) => {
    await assertKeepsOwner(tx, granted.caseId, granted.userId, access, mayChangeOwners(found));
    await tx
      .insert(caseAccess)
      .values(granted)
      .onConflictDoUpdate({ target: [caseAccess.caseId, caseAccess.userId], set: { access, updatedAt: now() } });
  });
  return granted;
}

/** DELETE /cases/{caseId}/access/{userId}: revoke; the last owner cannot be removed. */
export async function revokeCaseAccess(
  organization: OrganizationContext,
  actor: Actor,
  caseId: string,
  userId: string,
) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  // UUIDs compare case-insensitively; stored ids are lowercase.
  const target = userId.toLowerCase();
  // Anyone may give up their own access; taking someone else's is managing the case.
  if (target !== actor.user.id)
    assertCaseRule(found, CASE_RULES.manage, 'Owner or admin access to the case is required');
  const removed = await transaction(async (tx) => {
    await assertKeepsOwner(tx, found.case.id, target, null, mayChangeOwners(found));
    return tx
      .delete(caseAccess)
      .where(and(eq(caseAccess.caseId, found.case.id), idEquals(caseAccess.userId, target)))
      .returning();
  });
  if (removed.length === 0) throw new NotFoundError('This user has no access to the case');
  return { message: 'Access revoked' };
}

/** Whether the caller may change or take away a case owner's access: a case owner, or an organization owner or admin. */
const mayChangeOwners = (found: { access: CaseAccessLevel; orgRole: string }) =>
  found.access === 'owner' || found.orgRole === 'owner' || found.orgRole === 'admin';

/**
 * Changing `userId`'s access to `next` (null: revoking): an owner's access is changed only by
 * someone who may change owners (403 otherwise: a case admin cannot demote the owner), and a
 * case always keeps an owner (changing or removing the last one is 400).
 */
async function assertKeepsOwner(
  tx: Parameters<Parameters<typeof transaction>[0]>[0],
  caseId: string,
  userId: string,
  next: CaseAccessLevel | null,
  callerMayChangeOwners: boolean,
) {
  if (next === 'owner') return;
  const owners = await tx
    .select({ userId: caseAccess.userId })
    .from(caseAccess)
    .where(and(eq(caseAccess.caseId, caseId), eq(caseAccess.access, 'owner')))
    .for('update');
  if (!owners.some((owner) => owner.userId === userId)) return;
  if (!callerMayChangeOwners)
    throw new ForbiddenError(
      "Only a case owner or an organization owner or admin may change an owner's access",
      'INSUFFICIENT_ROLE',
    );
  if (owners.length === 1) throw new BadRequestError('A case must keep at least one owner', 'LAST_OWNER');
}
