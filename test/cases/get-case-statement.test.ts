import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { cases } from '../../lib/db/schema';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, insertRows, putOnPlan, secondsApart } from '../harness/billing';
import { caseWithAccess, grantCase } from '../harness/cases';
import { joinOrganization } from '../harness/organizations';
import { describeSecurity } from '../harness/security';

const statement = (
  user: TestUser,
  caseId: string,
  query?: Record<string, string>,
  organizationId = user.organizationId,
) => invoke(routes.getCaseStatement, { ...as(user, organizationId), path: { caseId }, ...(query ? { query } : {}) });

describe('GET /cases/{caseId}/billing/statement', () => {
  describeSecurity(routes.getCaseStatement, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });

  it('answers an empty statement for a case without charges', async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner, 'owner', 'Empty v. Case');

    const data = expectData(await statement(owner, target.id));

    expect(data).toEqual({
      caseId: target.id,
      caseName: 'Empty v. Case',
      isPro: false,
      pro: { source: null, until: null, changes: [] },
      rows: [],
      total: 0,
      limit: 50,
      skip: 0,
      totalChargedCents: 0,
      totalInformationalCents: 0,
    });
  });

  it('pages rows newest first with limit and skip; both totals cover every row, not only the page', async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner);
    const at = secondsApart(8);
    const amounts = [100, 200, 300, 400, 500, 600, 700, 800];
    const seeded = await insertRows(
      owner.organizationId,
      amounts.map((amountCents, index) => ({
        caseId: target.id,
        amountCents,
        status: index === 3 ? ('plan_included' as const) : ('paid' as const),
        createdAt: at[index],
      })),
    );

    const first = expectData(await statement(owner, target.id, { limit: '3' }));
    const last = expectData(await statement(owner, target.id, { limit: '3', skip: '6' }));

    expect(first.rows.map((r: any) => r.amountCents)).toEqual([800, 700, 600]);
    expect(last.rows.map((r: any) => r.amountCents)).toEqual([200, 100]);
    for (const page of [first, last]) {
      expect(page).toMatchObject({ total: 8, limit: 3, totalChargedCents: 3_200, totalInformationalCents: 400 });
    }
    expect(last.skip).toBe(6);
    expect(first.rows[0]).toEqual({
      id: seeded[7]!.id,
      date: at[7]!.toISOString(),
      skuKey: 'case_pro_upgrade',
      description: 'Seeded paid 800',
      quantity: 1,
      unitAmountCents: 800,
      amountCents: 800,
      status: 'paid',
      informational: false,
      creditsAppliedCents: 0,
      caseId: target.id,
      chargeScope: 'case',
      processorInvoiceId: null,
      hostedInvoiceUrl: null,
    });
  });

  it('answers 50 rows by default and at most 200', async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner);
    await insertRows(
      owner.organizationId,
      secondsApart(205).map((createdAt) => ({ caseId: target.id, amountCents: 1, createdAt })),
    );

    const byDefault = expectData(await statement(owner, target.id));
    const largest = expectData(await statement(owner, target.id, { limit: '200' }));

    expect(byDefault.rows).toHaveLength(50);
    expect(largest.rows).toHaveLength(200);
    expect(byDefault).toMatchObject({ total: 205, totalChargedCents: 205 });
  });

  it('counts plan-included rows as informational only; waived, voided, failed and refunded rows are never charged', async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner);
    await insertRows(owner.organizationId, [
      { caseId: target.id, amountCents: 1_000, status: 'paid' },
      {
        caseId: target.id,
        amountCents: 2_000,
        status: 'INVOICED',
        invoiceId: 'in_test_1',
        hostedInvoiceUrl: 'https://pay.example.test/in_test_1',
      },
      { caseId: target.id, amountCents: 4_000, status: 'processing' },
      { caseId: target.id, amountCents: 14_900, status: 'plan_included' },
      { caseId: target.id, amountCents: 8_000, status: 'waived' },
      { caseId: target.id, amountCents: 16_000, status: 'voided' },
      { caseId: target.id, amountCents: 32_000, status: 'failed' },
      { caseId: target.id, amountCents: 64_000, status: 'refunded' },
    ]);

    const data = expectData(await statement(owner, target.id));

    expect(data).toMatchObject({ total: 8, totalChargedCents: 7_000, totalInformationalCents: 14_900 });
    const included = data.rows.find((r: any) => r.status === 'plan_included');
    expect(included).toMatchObject({ informational: true, amountCents: 14_900 });
    expect(data.rows.filter((r: any) => r.informational)).toHaveLength(1);
    const invoiced = data.rows.find((r: any) => r.status === 'INVOICED');
    expect(invoiced).toMatchObject({
      invoiceId: 'in_test_1',
      processorInvoiceId: 'in_test_1',
      hostedInvoiceUrl: 'https://pay.example.test/in_test_1',
    });
    expect(data.rows.find((r: any) => r.status === 'paid')).not.toHaveProperty('invoiceId');
  });

  it("holds only this case's rows: not other cases', not organization-wide ones", async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner);
    const sibling = await createCaseRow(owner.organizationId);
    await insertRows(owner.organizationId, [
      { caseId: target.id, amountCents: 1_000 },
      { caseId: sibling.id, amountCents: 2_000 },
      { caseId: null, amountCents: 4_000 },
    ]);

    const data = expectData(await statement(owner, target.id));

    expect(data.rows.map((r: any) => r.amountCents)).toEqual([1_000]);
    expect(data).toMatchObject({ total: 1, totalChargedCents: 1_000 });
  });

  it('shows the Pro charge recorded by a pro-upgrade', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });
    const target = await caseWithAccess(owner.organizationId, owner);
    expectData(await invoke(routes.upgradeCaseToPro, { ...as(owner), path: { caseId: target.id } }));

    const data = expectData(await statement(owner, target.id));

    expect(data).toMatchObject({ isPro: true, total: 1, totalChargedCents: 14_900 });
    expect(data.rows[0]).toMatchObject({
      skuKey: 'case_pro_upgrade',
      status: 'paid',
      invoiceId: expect.stringMatching(/^in_sandbox_/),
      hostedInvoiceUrl: expect.any(String),
    });
  });

  it('lets admin access to the case through', async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner, 'admin');

    expect(expectData(await statement(owner, target.id)).caseId).toBe(target.id);
  });

  it.each(['viewer', 'opposing_counsel', null] as const)(
    'answers 403 INSUFFICIENT_ROLE with %s access to the case, and no data',
    async (access) => {
      const owner = await createUser();
      const target = access
        ? await caseWithAccess(owner.organizationId, owner, access, 'Secret v. Case')
        : await createCaseRow(owner.organizationId, { name: 'Secret v. Case' });
      await insertRows(owner.organizationId, [{ caseId: target.id, amountCents: 1_234 }]);

      const result = await statement(owner, target.id);

      expectError(result, 403, 'INSUFFICIENT_ROLE');
      expect(result.body.data).toBeUndefined();
      expect(JSON.stringify(result.body)).not.toContain('Secret v. Case');
    },
  );

  it('answers 403 FORBIDDEN and never data for a case of another organization than the header, even to its owner', async () => {
    const owner = await createUser();
    const other = await createUser();
    const foreign = await caseWithAccess(other.organizationId, other, 'owner', 'Foreign v. Case');
    await insertRows(other.organizationId, [{ caseId: foreign.id, amountCents: 9_999 }]);
    await joinOrganization(other.organizationId, owner, 'member');
    await grantCase(foreign.id, owner.id, 'owner');

    const result = await statement(owner, foreign.id, undefined, owner.organizationId);

    expectError(result, 403, 'FORBIDDEN');
    expect(result.body.data).toBeUndefined();
    expect(JSON.stringify(result.body)).not.toMatch(/Foreign v\. Case|9999/);
    // With the case's own organization in the header the same caller reads it.
    expect(expectData(await statement(owner, foreign.id, undefined, other.organizationId)).totalChargedCents).toBe(
      9_999,
    );
  });

  it('answers 404 NOT_FOUND for an unknown or deleted case', async () => {
    const owner = await createUser();
    const deleted = await caseWithAccess(owner.organizationId, owner);
    await db().update(cases).set({ deletedAt: new Date() }).where(eq(cases.id, deleted.id));

    expectError(await statement(owner, '0190c0de-0000-7000-8000-000000000001'), 404, 'NOT_FOUND');
    expectError(await statement(owner, deleted.id), 404, 'NOT_FOUND');
  });

  it.each([
    ['limit above 200', { limit: '201' }, 'query.limit'],
    ['limit 0', { limit: '0' }, 'query.limit'],
    ['a fractional limit', { limit: '2.5' }, 'query.limit'],
    ['a negative skip', { skip: '-5' }, 'query.skip'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, field) => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner);

    expectError(await statement(owner, target.id, query), 400, 'VALIDATION_FAILED', [field]);
  });

  it('answers 404 NOT_FOUND for a caseId that is not a uuid, as for an unknown case', async () => {
    const owner = await createUser();

    expectError(await statement(owner, 'not-a-case'), 404, 'NOT_FOUND');
  });
});
