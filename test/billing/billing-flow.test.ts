import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { db } from '../../lib/db/client';
import { billingRows, caseAccess, cases, organizations } from '../../lib/db/schema';
import { createCaseRow, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

const urls = {
  successUrl: 'https://app.example.test/billing/done',
  cancelUrl: 'https://app.example.test/billing/cancel',
};

describe('billing end to end on the sandbox processor', () => {
  it('selects a plan, saves a card, pays the base fee, upgrades a case, and reports it to the cent', async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    const legal = await createCaseRow(owner.organizationId, { name: 'Doe v. Roe' });
    await db().insert(caseAccess).values({ caseId: legal.id, userId: owner.id, access: 'owner' });

    // Not on case billing yet.
    expectError(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }), 403, 'FEATURE_DISABLED');
    // Billing reports come with tier3: not on the free plan.
    expectError(
      await invoke(routes.createBillingReport, { ...as, body: { format: 'json' } }),
      403,
      'FEATURE_NOT_IN_PLAN',
      ['feature', 'lowestTier'],
    );

    // No card: the URLs are required, then a set-up link comes back.
    expectError(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier3' } }), 400, 'VALIDATION_FAILED', [
      'body.successUrl',
      'body.cancelUrl',
    ]);
    const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier3', ...urls } }));
    expect(selected).toMatchObject({ tier: 'tier3', cadence: 'monthly', prorationCents: 0, paymentRequired: true });
    expect(selected.setupSessionUrl).toContain('/_sandbox/checkout/cs_sandbox_');

    const [baseFee] = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(baseFee).toMatchObject({ amountCents: 19_900, status: 'INVOICED', caseId: null });

    const sessionId = new URL(selected.setupSessionUrl).pathname.split('/').at(-1)!;
    expect(await completeSandboxCheckout(sessionId, '4242 4242 4242 4242')).toEqual({ successUrl: urls.successUrl });
    const [paidFee] = await db().select().from(billingRows).where(eq(billingRows.id, baseFee!.id));
    expect(paidFee!.status).toBe('paid');

    const upgrade = expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
    expect(upgrade).toEqual({ caseId: legal.id, status: 'processing' });
    const [afterUpgrade] = await db().select().from(cases).where(eq(cases.id, legal.id));
    expect(afterUpgrade!.isPro).toBe(true);
    expectError(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }), 409, 'CONFLICT');

    const statement = expectData(await invoke(routes.getCaseStatement, { ...as, path: { caseId: legal.id } }));
    expect(statement).toMatchObject({
      caseName: 'Doe v. Roe',
      isPro: true,
      total: 1,
      totalChargedCents: 14_900,
      totalInformationalCents: 0,
    });
    expect(statement.rows[0]).toMatchObject({
      skuKey: 'case_pro_upgrade',
      status: 'paid',
      chargeScope: 'case',
      invoiceId: expect.stringMatching(/^in_sandbox_/),
    });

    const reconciliation = expectData(await invoke(routes.getReconciliation, as));
    expect(reconciliation.totalChargedCents).toBe(34_800);
    expect(reconciliation.groups.map((g: any) => [g.caseId, g.chargeScope, g.subtotalChargedCents])).toEqual(
      expect.arrayContaining([
        ['organization', 'platform', 19_900],
        [legal.id, 'case', 14_900],
      ]),
    );

    const report = expectData(await invoke(routes.createBillingReport, { ...as, body: { format: 'json' } }));
    expect(report.grandTotalChargedCents).toBe(34_800);
    const pdf = expectData(await invoke(routes.createBillingReport, { ...as, body: { format: 'pdf' } }));
    expect(pdf).toMatchObject({ contentType: 'application/pdf', rowCount: 2 });
    expect(pdf.sizeBytes).toBeGreaterThan(500);

    const current = expectData(await invoke(routes.getCurrentPlan, as));
    expect(current).toMatchObject({
      plan: { tier: 'tier3', cadence: 'monthly', paymentMethod: { last4: '4242' } },
      delinquent: false,
    });

    const [org] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
    expect(org!.hasPaymentMethod).toBe(true);
  });
});
