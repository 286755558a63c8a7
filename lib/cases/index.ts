import { and, asc, count, desc, eq, isNull } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type {
  CaseAccessPath,
  CreateCaseDto,
  GrantCaseAccessDto,
  ListCasesQuery,
  UpdateCaseDto,
} from '../../schemas/cases/cases';
import { recordAudit } from '../audit/record';
import { isProNow } from './pro-status';
import type { Actor } from '../auth/actor';
import { now } from '../clock';
import { db } from '../db/client';
import { caseAccess, cases } from '../db/schema/cases';
import { organizationMembers } from '../db/schema/organizations';
import { transaction } from '../db/transaction';
import { idEquals } from '../ids';
import { assertCaseFits, lockAllowances } from '../organizations/allowances';
import type { OrganizationContext } from '../organizations/context';
import { pageWindow, toPage } from '../paging';
import type { CaseContext } from './context';
import {
  GranteeNotMemberError,
  LastCaseOwnerError,
  NoAccessToRevokeError,
  OwnerChangeDeniedError,
  OwnerGrantDeniedError,
} from './errors';
import type { CaseAccess } from './rules';

export type { CaseContext } from './context';

type CaseRow = typeof cases.$inferSelect;

/** The Case extension entity, with the caller's access. */
export function toCaseEntity(row: CaseRow, access: CaseAccess | null) {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    isPro: isProNow(row),
    archivedAt: row.archivedAt?.toISOString() ?? null,
    deletedAt: row.deletedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    access,
  };
}

/**
 * POST /cases: a case in the header's organization; the creator gets owner access. 403
 * CASE_LIMIT_REACHED once the enforced plan's cases for the calendar month are created, counted
 * under the allowance lock so concurrent requests never pass the cap together.
 */
export async function createCase(
  ctx: { actor: Actor; organization: OrganizationContext },
  input: z.output<typeof CreateCaseDto>,
) {
  const created = await transaction(async (tx) => {
    await assertCaseFits(tx, await lockAllowances(tx, ctx.organization.id));
    const [row] = await tx.insert(cases).values({ organizationId: ctx.organization.id, name: input.name }).returning();
    await tx.insert(caseAccess).values({ caseId: row!.id, userId: ctx.actor.user.id, access: 'owner' });
    recordAudit(tx, {
      action: 'case.created',
      organizationId: row!.organizationId,
      caseId: row!.id,
      target: { type: 'case', id: row!.id },
      metadata: { name: row!.name },
    });
    return row!;
  });
  return toCaseEntity(created, 'owner');
}

/** GET /cases: the cases of the organization the caller has access to, newest first. */
export async function listCases(
  ctx: { actor: Actor; organization: OrganizationContext },
  query: z.output<typeof ListCasesQuery>,
) {
  const window = pageWindow(query);
  const where = and(
    eq(cases.organizationId, ctx.organization.id),
    isNull(cases.deletedAt),
    query.includeArchived ? undefined : isNull(cases.archivedAt),
  );
  const direction = query.sortOrder === 'asc' ? asc : desc;
  const withAccess = and(eq(caseAccess.caseId, cases.id), eq(caseAccess.userId, ctx.actor.user.id));
  const [rows, [totals]] = await Promise.all([
    db()
      .select({ case: cases, access: caseAccess.access })
      .from(cases)
      .innerJoin(caseAccess, withAccess)
      .where(where)
      .orderBy(direction(cases.createdAt), direction(cases.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(cases).innerJoin(caseAccess, withAccess).where(where),
  ]);
  return toPage(
    window,
    totals!.total,
    rows.map((r) => toCaseEntity(r.case, r.access)),
  );
}

/** GET /cases/{caseId} */
export async function getCase(ctx: { caseContext: CaseContext }) {
  return toCaseEntity(ctx.caseContext.case, ctx.caseContext.access);
}

/** PATCH /cases/{caseId}: rename, archive (archived: true) or restore (false). */
export async function updateCase(ctx: { caseContext: CaseContext }, input: z.output<typeof UpdateCaseDto>) {
  const { case: found, access } = ctx.caseContext;
  const changes: Partial<typeof cases.$inferInsert> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.archived !== undefined) changes.archivedAt = input.archived ? (found.archivedAt ?? now()) : null;
  if (Object.keys(changes).length === 0) return toCaseEntity(found, access);
  const updated = await transaction(async (tx) => {
    const [row] = await tx.update(cases).set(changes).where(eq(cases.id, found.id)).returning();
    recordAudit(tx, {
      action: 'case.updated',
      organizationId: found.organizationId,
      caseId: found.id,
      target: { type: 'case', id: found.id },
      metadata: { changes: { name: input.name, archived: input.archived } },
    });
    return row!;
  });
  return toCaseEntity(updated, access);
}

/** DELETE /cases/{caseId}: soft delete (the evidence stays, the case disappears from every list). */
export async function deleteCase(ctx: { caseContext: CaseContext }) {
  const found = ctx.caseContext.case;
  await transaction(async (tx) => {
    await tx.update(cases).set({ deletedAt: now() }).where(eq(cases.id, found.id));
    recordAudit(tx, {
      action: 'case.deleted',
      organizationId: found.organizationId,
      caseId: found.id,
      target: { type: 'case', id: found.id },
      metadata: { name: found.name },
    });
  });
  return { message: `Case "${found.name}" deleted` };
}

/** PUT /cases/{caseId}/access/{userId}: grant or change a member's access; only an owner grants owner. */
export async function grantCaseAccess(
  ctx: { organization: OrganizationContext; caseContext: CaseContext },
  input: z.output<typeof CaseAccessPath> & z.output<typeof GrantCaseAccessDto>,
) {
  const { caseContext } = ctx;
  const { access } = input;
  if (access === 'owner' && caseContext.access !== 'owner' && caseContext.orgRole !== 'owner')
    throw new OwnerGrantDeniedError();
  const [member] = await db()
    .select({ userId: organizationMembers.userId })
    .from(organizationMembers)
    .where(
      and(
        eq(organizationMembers.organizationId, ctx.organization.id),
        idEquals(organizationMembers.userId, input.userId),
      ),
    );
  if (!member) throw new GranteeNotMemberError();
  const granted = { caseId: caseContext.case.id, userId: member.userId, access };
  await transaction(async (tx) => {
    await assertKeepsOwner(tx, granted.caseId, granted.userId, access, mayChangeOwners(caseContext));
    await tx
      .insert(caseAccess)
      .values(granted)
      .onConflictDoUpdate({ target: [caseAccess.caseId, caseAccess.userId], set: { access, updatedAt: now() } });
    recordAudit(tx, {
      action: 'case.access.granted',
      organizationId: caseContext.case.organizationId,
      caseId: granted.caseId,
      target: { type: 'user', id: granted.userId },
      metadata: { access },
    });
  });
  return granted;
}

/**
 * DELETE /cases/{caseId}/access/{userId}: revoke; the last owner cannot be removed. Anyone may give
 * up their own access (the route's case rule has `self`); taking someone else's is managing the case.
 */
export async function revokeCaseAccess(ctx: { caseContext: CaseContext }, input: z.output<typeof CaseAccessPath>) {
  const { caseContext } = ctx;
  const caseId = caseContext.case.id;
  // UUIDs compare case-insensitively; stored ids are lowercase.
  const target = input.userId.toLowerCase();
  const removed = await transaction(async (tx) => {
    await assertKeepsOwner(tx, caseId, target, null, mayChangeOwners(caseContext));
    const rows = await tx
      .delete(caseAccess)
      .where(and(eq(caseAccess.caseId, caseId), idEquals(caseAccess.userId, target)))
      .returning();
    for (const row of rows)
      recordAudit(tx, {
        action: 'case.access.revoked',
        organizationId: caseContext.case.organizationId,
        caseId,
        target: { type: 'user', id: row.userId },
        metadata: { access: row.access },
      });
    return rows;
  });
  if (removed.length === 0) throw new NoAccessToRevokeError();
  return { message: 'Access revoked' };
}

/** Whether the caller may change or take away a case owner's access: a case owner, or an organization owner or admin. */
const mayChangeOwners = (found: CaseContext) =>
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
  next: CaseAccess | null,
  callerMayChangeOwners: boolean,
) {
  if (next === 'owner') return;
  const owners = await tx
    .select({ userId: caseAccess.userId })
    .from(caseAccess)
    .where(and(eq(caseAccess.caseId, caseId), eq(caseAccess.access, 'owner')))
    .for('update');
  if (!owners.some((owner) => owner.userId === userId)) return;
  if (!callerMayChangeOwners) throw new OwnerChangeDeniedError();
  if (owners.length === 1) throw new LastCaseOwnerError();
}
