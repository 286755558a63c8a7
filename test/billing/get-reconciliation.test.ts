import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { publicBaseUrl } from '../../lib/config';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, insertRows, putOnPlan, secondsApart } from '../harness/billing';
import { describeSecurity } from '../harness/security';

const reconciliation = (user: TestUser, query?: Record<string, string>) =>
  invoke(routes.getReconciliation, { ...as(user), ...(query ? { query } : {}) });

/** Case A: five 100-cent rows (oldest); two organization-wide fees; case B: 10, 20, 30 and a plan-included 14,900 (newest). */
async function seedOrganization() {
  const owner = await createUser();
  const caseA = await createCaseRow(owner.organizationId, { name: 'Alpha v. Beta' });
  const caseB = await createCaseRow(owner.organizationId, { name: 'Gamma v. Delta' });
  const at = secondsApart(11);
  await insertRows(owner.organizationId, [
    ...[0, 1, 2, 3, 4].map((i) => ({ caseId: caseA.id, amountCents: 100, createdAt: at[i] })),
    { caseId: null, amountCents: 1_000, createdAt: at[5] },
    { caseId: null, amountCents: 2_000, createdAt: at[6] },
    { caseId: caseB.id, amountCents: 10, createdAt: at[7] },
    { caseId: caseB.id, amountCents: 20, createdAt: at[8] },
    { caseId: caseB.id, amountCents: 30, createdAt: at[9] },
    { caseId: caseB.id, amountCents: 14_900, status: 'plan_included' as const, createdAt: at[10] },
  ]);
  return { owner, caseA, caseB };
}

const summary = (groups: any[]) =>
  groups.map((g) => ({
    caseId: g.caseId,
    caseName: g.caseName,
    chargeScope: g.chargeScope,
    charged: g.subtotalChargedCents,
    informational: g.subtotalInformationalCents,
    rows: g.rows.map((r: any) => r.amountCents),
  }));

describe('GET /billing/reconciliation', () => {
  describeSecurity(routes.getReconciliation, { request: () => ({}), succeeds: true });

  it('answers no groups and zero totals for an organization without billing rows', async () => {
    const owner = await createUser();

    expect(expectData(await reconciliation(owner))).toEqual({
      groups: [],
      total: 0,
      limit: 50,
      skip: 0,
      totalChargedCents: 0,
      totalInformationalCents: 0,
    });
  });

  it("groups a page newest first by case, with the base fees in the 'organization' group (platform scope)", async () => {
    const { owner, caseA, caseB } = await seedOrganization();

    const data = expectData(await reconciliation(owner));

    expect(data).toMatchObject({
      total: 11,
      limit: 50,
      skip: 0,
      totalChargedCents: 3_560,
      totalInformationalCents: 14_900,
    });
    expect(summary(data.groups)).toEqual([
      {
        caseId: caseB.id,
        caseName: 'Gamma v. Delta',
        chargeScope: 'case',
        charged: 60,
        informational: 14_900,
        rows: [14_900, 30, 20, 10],
      },
      {
        caseId: 'organization',
        caseName: null,
        chargeScope: 'platform',
        charged: 3_000,
        informational: 0,
        rows: [2_000, 1_000],
      },
      {
        caseId: caseA.id,
        caseName: 'Alpha v. Beta',
        chargeScope: 'case',
        charged: 500,
        informational: 0,
        rows: [100, 100, 100, 100, 100],
      },
    ]);
    expect(data.groups[1].rows.every((r: any) => r.chargeScope === 'platform' && r.caseId === null)).toBe(true);
  });

  it('computes each subtotal over all rows of the group even when the page holds only some of them', async () => {
    const { owner, caseA, caseB } = await seedOrganization();

    const first = expectData(await reconciliation(owner, { limit: '5' }));
    const second = expectData(await reconciliation(owner, { limit: '3', skip: '5' }));

    expect(summary(first.groups)).toEqual([
      {
        caseId: caseB.id,
        caseName: 'Gamma v. Delta',
        chargeScope: 'case',
        charged: 60,
        informational: 14_900,
        rows: [14_900, 30, 20, 10],
      },
      {
        caseId: 'organization',
        caseName: null,
        chargeScope: 'platform',
        charged: 3_000,
        informational: 0,
        rows: [2_000],
      },
    ]);
    expect(summary(second.groups)).toEqual([
      {
        caseId: 'organization',
        caseName: null,
        chargeScope: 'platform',
        charged: 3_000,
        informational: 0,
        rows: [1_000],
      },
      {
        caseId: caseA.id,
        caseName: 'Alpha v. Beta',
        chargeScope: 'case',
        charged: 500,
        informational: 0,
        rows: [100, 100],
      },
    ]);
    for (const page of [first, second])
      expect(page).toMatchObject({ total: 11, totalChargedCents: 3_560, totalInformationalCents: 14_900 });
    expect(second).toMatchObject({ limit: 3, skip: 5 });
  });

  it('never counts waived, voided, failed or refunded rows as charged', async () => {
    const owner = await createUser();
    const target = await createCaseRow(owner.organizationId);
    await insertRows(owner.organizationId, [
      { caseId: target.id, amountCents: 1_000, status: 'paid' },
      { caseId: target.id, amountCents: 2_000, status: 'waived' },
      { caseId: target.id, amountCents: 4_000, status: 'voided' },
      { caseId: target.id, amountCents: 8_000, status: 'failed' },
      { caseId: target.id, amountCents: 16_000, status: 'refunded' },
      { caseId: null, amountCents: 32_000, status: 'voided' },
    ]);

    const data = expectData(await reconciliation(owner));

    expect(data).toMatchObject({ total: 6, totalChargedCents: 1_000, totalInformationalCents: 0 });
    expect(summary(data.groups).map((g) => [g.caseId, g.charged])).toEqual(
      expect.arrayContaining([
        [target.id, 1_000],
        ['organization', 0],
      ]),
    );
  });

  it('carries the processor invoice id and hosted invoice link once a row is invoiced, and null before', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2');
    const target = await createCaseRow(owner.organizationId);
    await insertRows(owner.organizationId, [{ caseId: target.id, amountCents: 500, status: 'processing' }]);

    const data = expectData(await reconciliation(owner));

    const fee = data.groups.find((g: any) => g.caseId === 'organization').rows[0];
    expect(fee).toMatchObject({
      skuKey: 'platform_base_fee_tier2_monthly',
      status: 'INVOICED',
      invoiceId: expect.stringMatching(/^in_sandbox_/),
      processorInvoiceId: expect.stringMatching(/^in_sandbox_/),
      // A page of this API (the sandbox's hosted invoice), not of the web app.
      hostedInvoiceUrl: expect.stringMatching(new RegExp(`^${publicBaseUrl()}/_sandbox/invoices/in_sandbox_`)),
    });
    expect(fee.invoiceId).toBe(fee.processorInvoiceId);
    const pending = data.groups.find((g: any) => g.caseId === target.id).rows[0];
    expect(pending).toMatchObject({ status: 'processing', processorInvoiceId: null, hostedInvoiceUrl: null });
    expect(pending).not.toHaveProperty('invoiceId');
  });

  it("holds only the header organization's rows", async () => {
    const owner = await createUser();
    const other = await createUser();
    await insertRows(owner.organizationId, [{ amountCents: 1_000 }]);
    await insertRows(other.organizationId, [
      { amountCents: 2_000 },
      { caseId: (await createCaseRow(other.organizationId)).id, amountCents: 4_000 },
    ]);

    const data = expectData(await reconciliation(owner));

    expect(data).toMatchObject({ total: 1, totalChargedCents: 1_000 });
    expect(summary(data.groups).map((g) => g.rows)).toEqual([[1_000]]);
  });

  it('answers 50 rows by default and at most 200', async () => {
    const owner = await createUser();
    await insertRows(
      owner.organizationId,
      secondsApart(210).map((createdAt) => ({ amountCents: 1, createdAt })),
    );

    const byDefault = expectData(await reconciliation(owner));
    const largest = expectData(await reconciliation(owner, { limit: '200' }));

    expect(byDefault.groups[0].rows).toHaveLength(50);
    expect(largest.groups[0].rows).toHaveLength(200);
    expect(byDefault).toMatchObject({ total: 210, totalChargedCents: 210 });
    expect(byDefault.groups[0].subtotalChargedCents).toBe(210);
  });

  it.each([
    ['limit above 200', { limit: '201' }, 'query.limit'],
    ['limit 0', { limit: '0' }, 'query.limit'],
    ['limit not a number', { limit: 'all' }, 'query.limit'],
    ['skip not a number', { skip: 'x' }, 'query.skip'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, field) => {
    const owner = await createUser();

    expectError(await reconciliation(owner, query), 400, 'VALIDATION_FAILED', [field]);
  });
});
