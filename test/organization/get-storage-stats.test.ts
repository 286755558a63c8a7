import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { now } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { caseAccess, cases, organizationPlans } from '../../lib/db/schema';
import { addMember, createCaseRow, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

/** Gives `user` `access` to each case (the breakdown lists only cases the caller may open). */
async function grant(
  user: { id: string },
  rows: Array<{ id: string }>,
  access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel' = 'owner',
) {
  for (const row of rows) await db().insert(caseAccess).values({ caseId: row.id, userId: user.id, access });
}

const storageStats = (caller: { accessToken?: string }, orgId: string, query: Record<string, string | string[]> = {}) =>
  invoke(routes.getStorageStats, { token: caller.accessToken, path: { orgId }, query });

/** An organization with three live cases, one archived, one deleted, and a case of another organization. */
async function organizationWithCases() {
  const owner = await createUser();
  const other = await createUser();
  const small = await createCaseRow(owner.organizationId, { name: 'Small matter', storageBytes: 1_000 });
  const large = await createCaseRow(owner.organizationId, { name: 'Large matter', storageBytes: 9_000_000_000 });
  const medium = await createCaseRow(owner.organizationId, { name: 'Medium matter', storageBytes: 250_000 });
  const archived = await createCaseRow(owner.organizationId, {
    name: 'Archived matter',
    storageBytes: 50_000_000_000,
    archivedAt: now(),
  });
  const deleted = await createCaseRow(owner.organizationId, {
    name: 'Deleted matter',
    storageBytes: 70_000_000_000,
    deletedAt: now(),
  });
  const foreign = await createCaseRow(other.organizationId, { name: 'Foreign matter', storageBytes: 80_000_000_000 });
  await grant(owner, [small, large, medium, archived, deleted]);
  await grant(other, [foreign]);
  return { owner, other, small, large, medium, archived, deleted, foreign };
}

const entry = (row: { id: string; name: string; storageBytes: number }) => ({
  caseId: row.id,
  caseName: row.name,
  storage: row.storageBytes,
});

describe('GET /organization/{orgId}/storage-stats', () => {
  it('lists live cases only, largest first, with the total', async () => {
    // Prepare
    const { owner, small, large, medium } = await organizationWithCases();
    // Act
    const data = expectData(await storageStats(owner, owner.organizationId));
    // Assess
    expect(data).toEqual({
      totalStorage: 9_000_251_000,
      cases: [entry(large), entry(medium), entry(small)],
    });
  });

  it("counts a case's imported rows with its files, as the plan does (issue 29)", async () => {
    const owner = await createUser();
    const files = await createCaseRow(owner.organizationId, { name: 'Files', storageBytes: 5_000 });
    const rows = await createCaseRow(owner.organizationId, { name: 'Rows', storageBytes: 1_000 });
    await grant(owner, [files, rows]);
    await db().update(cases).set({ rowBytes: 7_000 }).where(eq(cases.id, rows.id));

    const data = expectData(await storageStats(owner, owner.organizationId));

    expect(data).toEqual({
      totalStorage: 13_000,
      cases: [
        { caseId: rows.id, caseName: 'Rows', storage: 8_000 },
        { caseId: files.id, caseName: 'Files', storage: 5_000 },
      ],
    });
  });

  it('orders cases of equal size by name', async () => {
    const owner = await createUser();
    const beta = await createCaseRow(owner.organizationId, { name: 'Beta', storageBytes: 10 });
    const alpha = await createCaseRow(owner.organizationId, { name: 'Alpha', storageBytes: 10 });
    await grant(owner, [beta, alpha]);
    const data = expectData(await storageStats(owner, owner.organizationId));
    expect(data.cases.map((c: { caseId: string }) => c.caseId)).toEqual([alpha.id, beta.id]);
  });

  it.each([
    ['repeated', (ids: string[]) => ids],
    ['comma-separated', (ids: string[]) => ids.join(',')],
    ['comma-separated with spaces', (ids: string[]) => ids.join(' , ')],
  ])('filters by caseIds given %s', async (_label, form) => {
    const { owner, small, large } = await organizationWithCases();
    const data = expectData(await storageStats(owner, owner.organizationId, { caseIds: form([small.id, large.id]) }));
    expect(data).toEqual({ totalStorage: 9_000_001_000, cases: [entry(large), entry(small)] });
  });

  it('never counts an archived, deleted, foreign or unknown case, even when asked for by id', async () => {
    const { owner, medium, archived, deleted, foreign } = await organizationWithCases();
    const data = expectData(
      await storageStats(owner, owner.organizationId, {
        caseIds: [medium.id, archived.id, deleted.id, foreign.id, UNKNOWN_ID],
      }),
    );
    expect(data).toEqual({ totalStorage: 250_000, cases: [entry(medium)] });
  });

  it('answers an empty breakdown for an organization without cases', async () => {
    const owner = await createUser();
    expect(expectData(await storageStats(owner, owner.organizationId))).toEqual({ totalStorage: 0, cases: [] });
  });

  it('stops counting a case once it is archived', async () => {
    const owner = await createUser();
    const kept = await createCaseRow(owner.organizationId, { storageBytes: 5 });
    const archivedLater = await createCaseRow(owner.organizationId, { storageBytes: 7 });
    await grant(owner, [kept, archivedLater]);
    expect(expectData(await storageStats(owner, owner.organizationId)).totalStorage).toBe(12);
    await db().update(cases).set({ archivedAt: now() }).where(eq(cases.id, archivedLater.id));
    expect(expectData(await storageStats(owner, owner.organizationId))).toEqual({
      totalStorage: 5,
      cases: [entry(kept)],
    });
  });

  it.each([['admin'], ['billing'], ['member'], ['client'], ['user']] as const)(
    'answers a %s (any role)',
    async (role) => {
      const { owner, large } = await organizationWithCases();
      const member = await addMember(owner.organizationId, role);
      await grant(member, [large], 'viewer');
      expect(expectData(await storageStats(member, owner.organizationId)).cases[0]).toEqual(entry(large));
    },
  );

  it("lists only the cases a member without access to the others may open; the total stays the organization's", async () => {
    // Prepare
    const { owner, medium } = await organizationWithCases();
    const member = await addMember(owner.organizationId, 'member');
    await grant(member, [medium], 'viewer');
    // Act
    const data = expectData(await storageStats(member, owner.organizationId));
    // Assess
    expect(data).toEqual({ totalStorage: 9_000_251_000, cases: [entry(medium)] });
  });

  it("never names the firm's other cases to opposing counsel, even when asked for by id", async () => {
    // Prepare
    const { owner, small, large, medium } = await organizationWithCases();
    const opposing = await addMember(owner.organizationId, 'client');
    await grant(opposing, [small], 'opposing_counsel');
    // Act
    const all = expectData(await storageStats(opposing, owner.organizationId));
    const asked = expectData(
      await storageStats(opposing, owner.organizationId, { caseIds: [large.id, medium.id, small.id] }),
    );
    // Assess
    expect(all).toEqual({ totalStorage: 9_000_251_000, cases: [entry(small)] });
    // A filtered total is of the named cases the caller may open: no other case's size shows through it.
    expect(asked).toEqual({ totalStorage: 1_000, cases: [entry(small)] });
  });

  it('answers an organization member without access to any case with the total and no case', async () => {
    const { owner } = await organizationWithCases();
    const member = await addMember(owner.organizationId, 'admin');
    expect(expectData(await storageStats(member, owner.organizationId))).toEqual({
      totalStorage: 9_000_251_000,
      cases: [],
    });
  });

  it('answers while the plan is inactive', async () => {
    const owner = await createUser();
    await createCaseRow(owner.organizationId, { storageBytes: 42 });
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expect(expectData(await storageStats(owner, owner.organizationId)).totalStorage).toBe(42);
  });

  it.each([
    ['a caseId over 200 characters', { caseIds: 'c'.repeat(201) }, ['query.caseIds.0']],
    ['a bad id among good ones', { caseIds: `${UNKNOWN_ID},${'c'.repeat(201)}` }, ['query.caseIds.1']],
    ['more than 100 ids', { caseIds: Array.from({ length: 101 }, () => UNKNOWN_ID).join(',') }, ['query.caseIds']],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, fields) => {
    const owner = await createUser();
    expectError(await storageStats(owner, owner.organizationId, query), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await storageStats(owner, 'not-a-uuid'), 403, 'NOT_A_MEMBER');
  });
});

describeSecurity(routes.getStorageStats, { request: ({ organizationId }) => ({ path: { orgId: organizationId } }) });

describe('GET /organization/{orgId}/storage-stats security', () => {
  it('answers 403 NOT_A_MEMBER to a member of another organization, with no case names', async () => {
    const { owner, other } = await organizationWithCases();
    const result = await storageStats(other, owner.organizationId);
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect(JSON.stringify(result.body)).not.toContain('matter');
    expectError(await storageStats(other, UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it('answers an automation token with organization:read with the stats', async () => {
    const owner = await createUser();
    await createCaseRow(owner.organizationId, { storageBytes: 3 });
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await storageStats({ accessToken: reader.token }, owner.organizationId)).totalStorage).toBe(3);
  });
});
