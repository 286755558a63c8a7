import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { TIERS } from '../../lib/billing/tiers';
import { addMonths, now, testClock } from '../../lib/clock';
import { overrideConfig, publicBaseUrl } from '../../lib/config';
import { db } from '../../lib/db/client';
import { billingHistory, organizations, sandboxInvoices } from '../../lib/db/schema';
import { createUser, type TestUser, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, ledgerOf, putOnPlan, rowsOfOrganization, urls } from '../harness/billing';
import { organizationRow } from '../harness/organizations';
import { describeSecurity } from '../harness/security';

const selectPlan = (user: TestUser, body: unknown) => invoke(routes.selectPlan, { ...as(user), body });

async function subscriptionHistory(organizationId: string) {
  return db()
    .select()
    .from(billingHistory)
    .where(and(eq(billingHistory.organizationId, organizationId), eq(billingHistory.category, 'subscription')));
}

/** The organization row's billing columns, for "nothing changed" checks. */
async function billingColumns(organizationId: string) {
  const row = await organizationRow(organizationId);
  return {
    mode: row.billingMode,
    tier: row.billingTier,
    cadence: row.billingCadence,
    start: row.billingPeriodStart,
    end: row.billingPeriodEnd,
  };
}

describe('POST /billing/plan', () => {
  // Team (tier3): ten seats hold the suite's member of each role.
  describeSecurity(routes.selectPlan, { request: () => ({ body: { tier: 'tier3', ...urls } }), succeeds: true });

  it('first selection without a card: monthly by default, prorationCents 0, a card set-up link, the base fee invoiced for the period', async () => {
    const owner = await createUser();
    testClock.freeze();
    const at = now();

    const data = expectData(await selectPlan(owner, { tier: 'tier1', ...urls }));

    expect(data).toEqual({
      tier: 'tier1',
      cadence: 'monthly',
      billingMode: 'pay_as_you_go',
      prorationCents: 0,
      paymentRequired: true,
      setupSessionUrl: expect.stringMatching(new RegExp(`^${publicBaseUrl()}/_sandbox/checkout/cs_sandbox_`)),
    });
    expect(await billingColumns(owner.organizationId)).toEqual({
      mode: 'pay_as_you_go',
      tier: 'tier1',
      cadence: 'monthly',
      start: at,
      end: addMonths(at, 1),
    });
    const rows = await rowsOfOrganization(owner.organizationId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      caseId: null,
      skuKey: 'platform_base_fee_tier1_monthly',
      amountCents: 4_900,
      status: 'INVOICED',
      periodStart: at,
      periodEnd: addMonths(at, 1),
      createdById: owner.id,
    });
    const history = await subscriptionHistory(owner.organizationId);
    expect(history.map((h) => [h.description, h.metadata])).toEqual([
      ['Plan Solo (monthly) selected', { tier: 'tier1', cadence: 'monthly', prorationCents: 0 }],
    ]);
  });

  it('charges the annual price for an annual cadence, over twelve months', async () => {
    const owner = await createUser();
    testClock.freeze();
    const at = now();

    const data = expectData(await selectPlan(owner, { tier: 'tier2', cadence: 'annual', ...urls }));

    expect(data).toMatchObject({ tier: 'tier2', cadence: 'annual', prorationCents: 0 });
    const [row] = await rowsOfOrganization(owner.organizationId);
    expect(row).toMatchObject({
      skuKey: 'platform_base_fee_tier2_annual',
      amountCents: 99_000,
      periodEnd: addMonths(at, 12),
    });
  });

  it('defaults an annual-only tier (tier6) to annual', async () => {
    const owner = await createUser();

    const data = expectData(await selectPlan(owner, { tier: 'tier6', ...urls }));

    expect(data).toMatchObject({ tier: 'tier6', cadence: 'annual', prorationCents: 0 });
    expect((await organizationRow(owner.organizationId)).billingCadence).toBe('annual');
    const [row] = await rowsOfOrganization(owner.organizationId);
    expect(row!.amountCents).toBe(1_499_000);
  });

  it.each(['tier6', 'tier7'])(
    'answers 400 VALIDATION_FAILED naming body.cadence for a monthly cadence on the annual-only %s and changes nothing',
    async (tier) => {
      const owner = await createUser();
      const before = await billingColumns(owner.organizationId);

      expectError(await selectPlan(owner, { tier, cadence: 'monthly', ...urls }), 400, 'VALIDATION_FAILED', [
        'body.cadence',
      ]);

      expect(await billingColumns(owner.organizationId)).toEqual(before);
      expect(await rowsOfOrganization(owner.organizationId)).toEqual([]);
    },
  );

  it.each([
    ['neither URL', {}, ['body.successUrl', 'body.cancelUrl']],
    ['only successUrl', { successUrl: urls.successUrl }, ['body.cancelUrl']],
    ['only cancelUrl', { cancelUrl: urls.cancelUrl }, ['body.successUrl']],
  ])(
    'answers 400 VALIDATION_FAILED naming the missing URL without a card on file and %s, and changes nothing',
    async (_label, extra, fields) => {
      const owner = await createUser();

      const result = await selectPlan(owner, { tier: 'tier2', ...extra });

      expectError(result, 400, 'VALIDATION_FAILED', fields);
      expect(result.body.error.details.map((d: { path: string }) => d.path)).toEqual(fields);
      expect(result.body.error.details[0].message).toMatch(/successUrl and cancelUrl/);
      expect((await organizationRow(owner.organizationId)).billingMode).toBe('free');
      expect(await rowsOfOrganization(owner.organizationId)).toEqual([]);
    },
  );

  it('with a card on file needs no URLs: no paymentRequired, no set-up link, and the new fee is collected', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });

    const data = expectData(await selectPlan(owner, { tier: 'tier2', cadence: 'annual' }));

    expect(data).toMatchObject({ tier: 'tier2', cadence: 'annual', paymentRequired: false, setupSessionUrl: null });
    const fee = (await rowsOfOrganization(owner.organizationId)).find(
      (r) => r.skuKey === 'platform_base_fee_tier2_annual',
    );
    expect(fee).toMatchObject({ amountCents: 99_000, status: 'paid' });
  });

  it('answers prorationCents 0 and charges nothing when the same tier and cadence are selected again', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true });
    const before = await billingColumns(owner.organizationId);

    const data = expectData(await selectPlan(owner, { tier: 'tier2', cadence: 'monthly' }));

    expect(data).toEqual({
      tier: 'tier2',
      cadence: 'monthly',
      billingMode: 'pay_as_you_go',
      prorationCents: 0,
      paymentRequired: false,
      setupSessionUrl: null,
    });
    expect(await billingColumns(owner.organizationId)).toEqual(before);
    expect(await rowsOfOrganization(owner.organizationId)).toHaveLength(1);
    expect(await subscriptionHistory(owner.organizationId)).toHaveLength(1);
  });

  it('a change mid-period credits the unused half of the old fee against the new one and returns the exact net', async () => {
    let owner = await createUser();
    testClock.freeze();
    const start = now();
    await putOnPlan(owner, 'tier2', { card: true });
    const periodSeconds = (addMonths(start, 1).getTime() - start.getTime()) / 1000;
    testClock.advance(periodSeconds / 2);
    const changedAt = now();
    owner = await signIn(owner);
    const oldFee = TIERS.tier2.monthlyPriceCents!;
    const newFee = TIERS.tier3.monthlyPriceCents!;
    const unused = Math.floor((oldFee * (periodSeconds / 2)) / periodSeconds);
    const expectedNet = newFee - unused;
    expect(expectedNet).toBe(14_950);

    const data = expectData(await selectPlan(owner, { tier: 'tier3', cadence: 'monthly' }));

    expect(data).toEqual({
      tier: 'tier3',
      cadence: 'monthly',
      billingMode: 'pay_as_you_go',
      prorationCents: expectedNet,
      paymentRequired: false,
      setupSessionUrl: null,
    });
    expect(await billingColumns(owner.organizationId)).toEqual({
      mode: 'pay_as_you_go',
      tier: 'tier3',
      cadence: 'monthly',
      start: changedAt,
      end: addMonths(changedAt, 1),
    });
    const rows = await rowsOfOrganization(owner.organizationId);
    const fee = rows.find((r) => r.skuKey === 'platform_base_fee_tier3_monthly');
    const credit = rows.find((r) => r.skuKey === 'platform_base_fee_proration');
    expect(fee).toMatchObject({ amountCents: newFee, status: 'paid', periodStart: changedAt });
    expect(credit).toMatchObject({
      amountCents: -unused,
      status: 'paid',
      chargeKey: fee!.chargeKey,
      invoiceId: fee!.invoiceId,
    });
    const [invoice] = await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.id, fee!.invoiceId!));
    expect(invoice!.amountCents).toBe(expectedNet);
    const history = await subscriptionHistory(owner.organizationId);
    expect(history.map((h) => h.description)).toContain(
      `Plan changed from tier2 (monthly) to tier3 (monthly); net ${expectedNet} cents`,
    );
  });

  it('a downgrade worth less than the unused part puts the difference into credits', async () => {
    let owner = await createUser();
    testClock.freeze();
    const start = now();
    await putOnPlan(owner, 'tier3', { card: true });
    const periodSeconds = (addMonths(start, 1).getTime() - start.getTime()) / 1000;
    testClock.advance(periodSeconds / 2);
    owner = await signIn(owner);
    const unused = Math.floor((TIERS.tier3.monthlyPriceCents! * (periodSeconds / 2)) / periodSeconds);
    const expectedNet = TIERS.tier1.monthlyPriceCents! - unused;
    expect(expectedNet).toBe(-5_050);

    const data = expectData(await selectPlan(owner, { tier: 'tier1' }));

    expect(data.prorationCents).toBe(expectedNet);
    expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(-expectedNet);
    const ledger = await ledgerOf(owner.organizationId);
    expect(ledger).toEqual([
      expect.objectContaining({ kind: 'proration', amountCents: 5_050, balanceAfterCents: 5_050 }),
    ]);
  });

  it('moves a legacy organization onto pay_as_you_go: the billing summary of its details becomes non-null', async () => {
    const owner = await createUser();
    await db().update(organizations).set({ billingMode: 'legacy' }).where(eq(organizations.id, owner.organizationId));
    const before = expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
    expect(before.billing).toBeNull();

    const data = expectData(await selectPlan(owner, { tier: 'tier4', ...urls }));

    expect(data).toMatchObject({ tier: 'tier4', billingMode: 'pay_as_you_go', prorationCents: 0 });
    expect((await organizationRow(owner.organizationId)).billingMode).toBe('pay_as_you_go');
    const after = expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
    expect(after.billing).toMatchObject({
      billingMode: 'pay_as_you_go',
      onCaseBilling: true,
      tier: 'tier4',
      cadence: 'monthly',
      hasPaymentMethod: false,
      delinquent: false,
    });
    const history = await subscriptionHistory(owner.organizationId);
    expect(history.map((h) => h.description)).toEqual([
      'Plan Firm (monthly) selected, moved off the legacy subscription',
    ]);
  });

  it('CONCURRENCY: 5 simultaneous identical first selections charge one base fee and no proration', async () => {
    const owner = await createUser();

    const results = await Promise.all(Array.from({ length: 5 }, () => selectPlan(owner, { tier: 'tier2', ...urls })));

    for (const result of results)
      expect(expectData(result)).toMatchObject({
        tier: 'tier2',
        cadence: 'monthly',
        prorationCents: 0,
        paymentRequired: true,
      });
    const rows = await rowsOfOrganization(owner.organizationId);
    expect(rows.map((r) => [r.skuKey, r.amountCents])).toEqual([['platform_base_fee_tier2_monthly', 9_900]]);
    expect(await subscriptionHistory(owner.organizationId)).toHaveLength(1);
  });

  it('CONCURRENCY: 5 simultaneous identical changes (a double click) charge the change once', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });

    const results = await Promise.all(Array.from({ length: 5 }, () => selectPlan(owner, { tier: 'tier3' })));

    for (const result of results) expect(expectData(result)).toMatchObject({ tier: 'tier3', cadence: 'monthly' });
    expect(results.filter((r) => r.body.data.prorationCents !== 0)).toHaveLength(1);
    const rows = await rowsOfOrganization(owner.organizationId);
    expect(rows.filter((r) => r.skuKey === 'platform_base_fee_tier3_monthly')).toHaveLength(1);
    expect(rows.filter((r) => r.skuKey === 'platform_base_fee_proration')).toHaveLength(1);
    expect(
      (await subscriptionHistory(owner.organizationId)).filter((h) => h.description.startsWith('Plan changed')),
    ).toHaveLength(1);
    expect(await ledgerOf(owner.organizationId)).toEqual([]);
  });

  it('creates the missing processor customer before anything changes, so a card set-up link comes back (never a 409 after the plan changed)', async () => {
    const owner = await createUser();
    await db()
      .update(organizations)
      .set({ processorCustomerId: null })
      .where(eq(organizations.id, owner.organizationId));

    const data = expectData(await selectPlan(owner, { tier: 'tier1', ...urls }));

    expect(data).toMatchObject({
      tier: 'tier1',
      paymentRequired: true,
      setupSessionUrl: expect.stringContaining('/_sandbox/checkout/cs_sandbox_'),
    });
    const organization = await organizationRow(owner.organizationId);
    expect(organization).toMatchObject({
      billingMode: 'pay_as_you_go',
      billingTier: 'tier1',
      processorCustomerId: expect.stringMatching(/^cus_sandbox_/),
    });
  });

  it('answers 403 FEATURE_DISABLED while self-serve plan selection is off, and changes nothing', async () => {
    const owner = await createUser();
    const restore = overrideConfig({ FEATURE_SELF_SERVE_PLANS: false });
    try {
      expectError(await selectPlan(owner, { tier: 'tier1', ...urls }), 403, 'FEATURE_DISABLED');
    } finally {
      restore();
    }
    expect((await organizationRow(owner.organizationId)).billingMode).toBe('free');
    expect(await rowsOfOrganization(owner.organizationId)).toEqual([]);
  });

  it.each([
    ['an unknown tier', { tier: 'tier8', ...urls }, 'body.tier'],
    ['a missing tier', { ...urls }, 'body.tier'],
    ['an unknown cadence', { tier: 'tier1', cadence: 'weekly', ...urls }, 'body.cadence'],
    [
      'a successUrl that is not a URL',
      { tier: 'tier1', successUrl: 'not a url', cancelUrl: urls.cancelUrl },
      'body.successUrl',
    ],
    [
      'a cancelUrl that is not a URL',
      { tier: 'tier1', successUrl: urls.successUrl, cancelUrl: 'app/cancel' },
      'body.cancelUrl',
    ],
    [
      'a javascript: successUrl',
      { tier: 'tier1', successUrl: 'javascript:alert(1)', cancelUrl: urls.cancelUrl },
      'body.successUrl',
    ],
    [
      'a file: cancelUrl',
      { tier: 'tier1', successUrl: urls.successUrl, cancelUrl: 'file:///etc/passwd' },
      'body.cancelUrl',
    ],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body, field) => {
    const owner = await createUser();

    expectError(await selectPlan(owner, body), 400, 'VALIDATION_FAILED', [field]);
    expect(await rowsOfOrganization(owner.organizationId)).toEqual([]);
  });

  it('ignores a field it does not know: a coupon changes nothing, the full base fee is invoiced', async () => {
    const owner = await createUser();

    const data = expectData(
      await selectPlan(owner, { tier: 'tier1', ...urls, coupon: 'FREE', prorationCents: -4_900 }),
    );

    expect(data).toMatchObject({ tier: 'tier1', billingMode: 'pay_as_you_go', prorationCents: 0 });
    expect((await rowsOfOrganization(owner.organizationId)).map((r) => [r.skuKey, r.amountCents])).toEqual([
      ['platform_base_fee_tier1_monthly', 4_900],
    ]);
  });
});
