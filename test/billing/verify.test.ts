import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { grantCredits } from '../../lib/billing/admin';
import { verifyBilling } from '../../lib/billing/verify';
import { db } from '../../lib/db/client';
import { billingRows, cases, creditLedger, organizations, sandboxInvoices } from '../../lib/db/schema';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { as, insertRows, ledgerOf, putOnPlan, rowsOfCase } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';

const upgrade = (user: TestUser, caseId: string) => invoke(routes.upgradeCaseToPro, { ...as(user), path: { caseId } });

/**
 * On Practice with a card (the base fee paid by card), 20,000 cents of credits granted in two
 * grants, half of each charge payable from credits, and a case upgraded to Pro: 7,450 from credits,
 * 7,450 invoiced (sandbox) and paid. Balance 12,550.
 */
async function cleanOrganization() {
  const owner = await createUser();
  // tier4: the first tier whose charges granted credits pay.
  await putOnPlan(owner, 'tier4', { card: true });
  await db()
    .update(organizations)
    .set({ creditDeductPercentage: 50 })
    .where(eq(organizations.id, owner.organizationId));
  await grantCredits(owner.organizationId, 15_000, 'Prepaid');
  await grantCredits(owner.organizationId, 5_000, 'Goodwill');
  const target = await caseWithAccess(owner.organizationId, owner);
  expectData(await upgrade(owner, target.id));
  const [pro] = await rowsOfCase(target.id);
  expect(pro).toMatchObject({
    amountCents: 14_900,
    creditsAppliedCents: 7_450,
    status: 'paid',
    invoiceId: expect.stringMatching(/^in_sandbox_/),
  });
  return { owner, organizationId: owner.organizationId, pro: pro! };
}

const differencesOf = async (organizationId: string) => (await verifyBilling(organizationId)).differences;

/** Ledger entries in chain order (created_at, id). */
async function chainOf(organizationId: string) {
  return (await ledgerOf(organizationId)).sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1),
  );
}

describe('verifyBilling', () => {
  it('finds no difference in a clean organization with grants and a charge paid partly from credits, alone or among all', async () => {
    const { organizationId } = await cleanOrganization();
    await createUser();

    expect(await verifyBilling(organizationId)).toEqual({ organizationsChecked: 1, differences: [] });
    const all = await verifyBilling();
    expect(all.differences).toEqual([]);
    expect(all.organizationsChecked).toBeGreaterThanOrEqual(2);
  });

  it('finds no difference after the other billing flows: a downgrade credited back, a plan-included upgrade, charges fully from credits, an open invoice, concurrent charges', async () => {
    // A downgrade worth less than the rest of the period: a negative proration row and a proration credit.
    const downgraded = await createUser();
    await putOnPlan(downgraded, 'tier2', { card: true, cadence: 'annual' });
    expect((await putOnPlan(downgraded, 'tier1')).prorationCents).toBeLessThan(0);
    expect((await ledgerOf(downgraded.organizationId)).map((e) => e.kind)).toEqual(['proration']);
    // Pro included in the tier: an informational plan_included row.
    const included = await createUser();
    await putOnPlan(included, 'tier5', { card: true, cadence: 'annual' });
    expectData(await upgrade(included, (await caseWithAccess(included.organizationId, included)).id));
    // No card: the base fee and a charge partly from credits stay on open invoices.
    const unpaid = await createUser();
    await putOnPlan(unpaid, 'tier2');
    await grantCredits(unpaid.organizationId, 4_000, 'Prepaid');
    expectData(await upgrade(unpaid, (await caseWithAccess(unpaid.organizationId, unpaid)).id));
    expect(
      (await db().select().from(billingRows).where(eq(billingRows.organizationId, unpaid.organizationId))).map(
        (r) => r.status,
      ),
    ).toEqual(['INVOICED', 'INVOICED']);
    // Ten concurrent upgrades against 30,000 cents: two fully from credits, one partly, the rest invoiced.
    const busy = await createUser();
    await putOnPlan(busy, 'tier2', { card: true });
    await grantCredits(busy.organizationId, 30_000, 'Prepaid');
    const targets = await Promise.all(Array.from({ length: 10 }, () => caseWithAccess(busy.organizationId, busy)));
    await Promise.all(targets.map((target) => upgrade(busy, target.id)));

    for (const user of [downgraded, included, unpaid, busy])
      expect(await verifyBilling(user.organizationId)).toEqual({ organizationsChecked: 1, differences: [] });
  });

  it('reports case_pro for a case Pro without a source: no paid upgrade, no Pro plan in force', async () => {
    const { organizationId, owner } = await cleanOrganization();
    const plan = await caseWithAccess(organizationId, owner);
    const paid = await caseWithAccess(organizationId, owner);
    await db().update(cases).set({ isPro: true, proSource: 'plan' }).where(eq(cases.id, plan.id));
    await db().update(cases).set({ isPro: true, proSource: 'paid' }).where(eq(cases.id, paid.id));
    // Pro through a plan whose days to pay ended is not Pro: nothing to report for it.
    const lapsed = await caseWithAccess(organizationId, owner);
    await db()
      .update(cases)
      .set({ isPro: true, proSource: 'plan', proUntil: new Date(Date.now() - 1_000) })
      .where(eq(cases.id, lapsed.id));

    expect(await differencesOf(organizationId)).toEqual(
      [
        {
          organizationId,
          check: 'case_pro',
          expected: 'a Pro-including plan in force',
          actual: 'none',
          detail: `case ${plan.id} is Pro (source plan)`,
        },
        {
          organizationId,
          check: 'case_pro',
          expected: 'a paid Pro upgrade',
          actual: 'none',
          detail: `case ${paid.id} is Pro (source paid)`,
        },
      ].sort((x, y) => (x.detail < y.detail ? -1 : 1)),
    );
  });

  it('reports credit_balance when the balance is off by one from the ledger', async () => {
    const { organizationId } = await cleanOrganization();
    await db().update(organizations).set({ creditBalanceCents: 12_551 }).where(eq(organizations.id, organizationId));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'credit_balance',
        expected: 12_550,
        actual: 12_551,
        detail: expect.stringContaining('3 ledger entries'),
      },
    ]);
  });

  it('reports ledger_chain on an entry whose balance_after is wrong, and on the entry after it', async () => {
    const { organizationId } = await cleanOrganization();
    const [first, second, third] = await chainOf(organizationId);
    expect([first!.amountCents, second!.amountCents, third!.amountCents]).toEqual([15_000, 5_000, -7_450]);
    await db().update(creditLedger).set({ balanceAfterCents: 19_999 }).where(eq(creditLedger.id, second!.id));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'ledger_chain',
        expected: 20_000,
        actual: 19_999,
        detail: expect.stringContaining(`ledger entry ${second!.id} (#2)`),
      },
      {
        organizationId,
        check: 'ledger_chain',
        expected: 12_549,
        actual: 12_550,
        detail: expect.stringContaining(`ledger entry ${third!.id} (#3)`),
      },
    ]);
  });

  it('reports ledger_chain when the first entry does not start from zero', async () => {
    const { organizationId } = await cleanOrganization();
    const [first] = await chainOf(organizationId);
    await db().update(creditLedger).set({ balanceAfterCents: 15_001 }).where(eq(creditLedger.id, first!.id));

    expect((await differencesOf(organizationId)).map((d) => [d.check, d.expected, d.actual])).toEqual([
      ['ledger_chain', 15_000, 15_001],
      ['ledger_chain', 15_001 + 5_000, 20_000],
    ]);
  });

  it('reports row_amount when amount_cents is not quantity x unit amount', async () => {
    const { organizationId, pro } = await cleanOrganization();
    await db().update(billingRows).set({ quantity: 2 }).where(eq(billingRows.id, pro.id));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'row_amount',
        expected: 29_800,
        actual: 14_900,
        detail: expect.stringContaining(`billing row ${pro.id}`),
      },
    ]);
  });

  it('reports charge_credits when credits are applied without a ledger entry', async () => {
    const { organizationId } = await cleanOrganization();
    const [seeded] = await insertRows(organizationId, [{ amountCents: 1_000 }]);
    await db().update(billingRows).set({ creditsAppliedCents: 400 }).where(eq(billingRows.id, seeded!.id));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'charge_credits',
        expected: 0,
        actual: 400,
        detail: expect.stringContaining(`charge ${seeded!.chargeKey}`),
      },
    ]);
  });

  it('reports ledger_charge_unlinked and charge_credits when the charge entry loses its billing row', async () => {
    const { organizationId, pro } = await cleanOrganization();
    const charge = (await ledgerOf(organizationId)).find((e) => e.kind === 'charge')!;
    await db().update(creditLedger).set({ billingRowId: null }).where(eq(creditLedger.id, charge.id));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'ledger_charge_unlinked',
        expected: 'a billing row of this organization',
        actual: 'none',
        detail: expect.stringContaining(charge.id),
      },
      {
        organizationId,
        check: 'charge_credits',
        expected: 0,
        actual: 7_450,
        detail: expect.stringContaining(`charge ${pro.chargeKey}`),
      },
    ]);
  });

  it('reports row_credits_applied when more credits are applied than the row amount (and what follows from it)', async () => {
    const { organizationId, pro } = await cleanOrganization();
    await db().update(billingRows).set({ creditsAppliedCents: 15_000 }).where(eq(billingRows.id, pro.id));

    expect((await differencesOf(organizationId)).map((d) => [d.check, d.expected, d.actual])).toEqual([
      ['row_credits_applied', '0..14900', 15_000],
      ['charge_credits', 7_450, 15_000],
      ['sandbox_invoice', -100, 7_450],
    ]);
  });

  it('reports sandbox_invoice when the invoice amount is not the rows on it minus the credits applied', async () => {
    const { organizationId, pro } = await cleanOrganization();
    await db().update(sandboxInvoices).set({ amountCents: 7_451 }).where(eq(sandboxInvoices.id, pro.invoiceId!));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'sandbox_invoice',
        expected: 7_450,
        actual: 7_451,
        detail: expect.stringContaining(`sandbox invoice ${pro.invoiceId}`),
      },
    ]);
  });

  it('reports charge_status, charge_invoice and charged_total for a charge whose rows disagree', async () => {
    const { organizationId } = await cleanOrganization();
    const [first, second] = await insertRows(organizationId, [
      { amountCents: 500, invoiceId: 'in_test_a' },
      { amountCents: 300, invoiceId: 'in_test_b', status: 'failed' },
    ]);
    await db()
      .update(billingRows)
      .set({ chargeKey: first!.chargeKey, idempotencyKey: `${first!.chargeKey}:1` })
      .where(eq(billingRows.id, second!.id));

    // Charged: base fee 39,900 + Pro 14,900 + the paid row 500 by row; the whole charge (its first row is paid) by charge.
    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'charge_status',
        expected: 'one status',
        actual: 'failed, paid',
        detail: expect.stringContaining(`charge ${first!.chargeKey} (2 row(s))`),
      },
      {
        organizationId,
        check: 'charge_invoice',
        expected: 'one invoice id',
        actual: 'in_test_a, in_test_b',
        detail: expect.stringContaining(`charge ${first!.chargeKey}`),
      },
      { organizationId, check: 'charged_total', expected: 55_600, actual: 55_300, detail: expect.any(String) },
    ]);
  });

  it('reports charge_status (and charged_total) for one invoice whose rows are in different statuses', async () => {
    const { organizationId } = await cleanOrganization();
    const [first, second] = await insertRows(organizationId, [
      { amountCents: 500, invoiceId: 'in_test_d', status: 'INVOICED' },
      { amountCents: 300, invoiceId: 'in_test_d', status: 'waived' },
    ]);
    await db()
      .update(billingRows)
      .set({ chargeKey: first!.chargeKey, idempotencyKey: `${first!.chargeKey}:1` })
      .where(eq(billingRows.id, second!.id));

    expect((await differencesOf(organizationId)).map((d) => [d.check, d.expected, d.actual])).toEqual([
      ['charge_status', 'one status', 'INVOICED, waived'],
      ['charged_total', 55_600, 55_300],
    ]);
  });

  it('reports charge_invoice when some rows of a charge are invoiced and others not', async () => {
    const { organizationId } = await cleanOrganization();
    const [first, second] = await insertRows(organizationId, [
      { amountCents: 500, invoiceId: 'in_test_c' },
      { amountCents: -100 },
    ]);
    await db()
      .update(billingRows)
      .set({ chargeKey: first!.chargeKey, idempotencyKey: `${first!.chargeKey}:1` })
      .where(eq(billingRows.id, second!.id));

    expect(await differencesOf(organizationId)).toEqual([
      {
        organizationId,
        check: 'charge_invoice',
        expected: 'one invoice id',
        actual: 'in_test_c; 1 row(s) without',
        detail: expect.any(String),
      },
    ]);
  });

  it('scopes to one organization, and lists every organization when none is named', async () => {
    const broken = await cleanOrganization();
    const clean = await cleanOrganization();
    await db().update(organizations).set({ creditBalanceCents: 1 }).where(eq(organizations.id, broken.organizationId));

    expect(await verifyBilling(clean.organizationId)).toEqual({ organizationsChecked: 1, differences: [] });
    const all = await verifyBilling();
    expect(all.differences.filter((d) => d.organizationId === broken.organizationId).map((d) => d.check)).toEqual([
      'credit_balance',
    ]);
    expect(all.differences.some((d) => d.organizationId === clean.organizationId)).toBe(false);
  });

  it('checks nothing for an id that names no organization', async () => {
    expect(await verifyBilling(randomUUID())).toEqual({ organizationsChecked: 0, differences: [] });
    expect(await verifyBilling('not-an-id')).toEqual({ organizationsChecked: 0, differences: [] });
  });

  it('runs the same number of queries whatever the number of organizations', async () => {
    await cleanOrganization();
    const { queries: before, result: first } = await countQueries(() => verifyBilling());
    const added = await Promise.all([cleanOrganization(), cleanOrganization(), cleanOrganization()]);
    const { queries: after, result: second } = await countQueries(() => verifyBilling());
    const { queries: one } = await countQueries(() => verifyBilling(added[0]!.organizationId));

    expect(second.organizationsChecked).toBe(first.organizationsChecked + 3);
    expect(after).toBe(before);
    expect(one).toBe(before);
    // Nine queries, and the statement that sets the transaction's isolation level and read-only mode.
    expect(before).toBe(10);
  });
});
