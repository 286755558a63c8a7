import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { grantCredits } from '../../lib/billing/admin';
import { collectOpenInvoices } from '../../lib/billing/collect-open-invoices';
import { retryStuckCharges } from '../../lib/billing/invoice-charge';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { billingRows, caseAccess, cases, organizations } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { DOUBLE_SECRET_KEY, useStripeDouble } from '../harness/stripe-double';
import { organizationRow } from '../harness/organizations';

const urls = {
  successUrl: 'https://app.example.test/billing/done',
  cancelUrl: 'https://app.example.test/billing/cancel',
};
const PRO_CENTS = 14_900;
const TIER2_MONTHLY_CENTS = 9_900;

const double = useStripeDouble();

async function rowsOfCharge(chargeKey: string) {
  return db().select().from(billingRows).where(eq(billingRows.chargeKey, chargeKey));
}

async function caseRow(caseId: string) {
  const [row] = await db().select().from(cases).where(eq(cases.id, caseId));
  return row!;
}

/**
 * A registered owner whose organization has its Stripe customer; with `card`, that card is saved at
 * Stripe and the organization knows it (what the webhook records; tested in test/webhooks/stripe-webhook.test.ts).
 */
async function stripeOrganization(card: { last4: string; declines?: boolean } | null = null) {
  const owner = await createUser();
  const customerId = (await organizationRow(owner.organizationId)).processorCustomerId;
  expect(customerId).toMatch(/^cus_/);
  if (card) {
    double.attachCard(customerId!, card);
    await db()
      .update(organizations)
      .set({ hasPaymentMethod: true, paymentMethodLast4: card.last4 })
      .where(eq(organizations.id, owner.organizationId));
  }
  return { owner, customerId: customerId!, as: { token: owner.accessToken, organization: owner.organizationId } };
}

async function billableCase(owner: TestUser) {
  const legal = await createCaseRow(owner.organizationId);
  await db().insert(caseAccess).values({ caseId: legal.id, userId: owner.id, access: 'owner' });
  return legal;
}

const invoicesOfCharge = (customerId: string, chargeKey: string) =>
  double.invoicesOf(customerId).filter((invoice) => invoice.metadata.chargeKey === chargeKey);

describe('Stripe adapter against the Stripe double, through the real routes', () => {
  it('registering creates the Stripe customer once, keyed by the organization', async () => {
    const owner = await createUser();
    const organization = await organizationRow(owner.organizationId);
    expect(organization.processorCustomerId).toMatch(/^cus_/);
    expect(double.customers.get(organization.processorCustomerId!)).toMatchObject({
      object: 'customer',
      name: organization.name,
      email: organization.email,
      metadata: { organizationId: owner.organizationId },
    });
    const calls = double
      .requestsTo('POST', '/v1/customers')
      .filter((r) => r.body.metadata?.organizationId === owner.organizationId);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.idempotencyKey).toBe(`organization-customer-${owner.organizationId}`);
  });

  it('a customer created at Stripe whose answer was lost is picked up by maintenance with the same key, not created twice', async () => {
    // Every attempt the SDK makes (1 + 2 retries) loses its answer; Stripe created the customer on the first.
    double.failNext('/v1/customers', 3, 'drop-after');
    const owner = await createUser();
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toBeNull();
    const atStripe = () =>
      [...double.customers.values()].filter((c) => c.metadata.organizationId === owner.organizationId);
    expect(atStripe()).toHaveLength(1);

    const { customersCreated } = await runMaintenance();
    expect(customersCreated).toBeGreaterThanOrEqual(1);
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toBe(atStripe()[0]!.id);
    expect(atStripe()).toHaveLength(1);
    const calls = double
      .requestsTo('POST', '/v1/customers')
      .filter((r) => r.body.metadata?.organizationId === owner.organizationId);
    expect(calls.map((c) => [c.idempotencyKey, c.replayed])).toEqual([
      [`organization-customer-${owner.organizationId}`, false],
      [`organization-customer-${owner.organizationId}`, true],
      [`organization-customer-${owner.organizationId}`, true],
      [`organization-customer-${owner.organizationId}`, true],
    ]);
  });

  it('selecting a plan without a card answers paymentRequired with the Stripe checkout URL and leaves the fee open', async () => {
    const { owner, customerId, as } = await stripeOrganization();
    const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    expect(selected).toMatchObject({ tier: 'tier2', cadence: 'monthly', prorationCents: 0, paymentRequired: true });

    const sessions = [...double.checkoutSessions.values()].filter((s) => s.customer === customerId);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({
      object: 'checkout.session',
      mode: 'setup',
      success_url: urls.successUrl,
      cancel_url: urls.cancelUrl,
    });
    expect(selected.setupSessionUrl).toBe(sessions[0]!.url);

    const [fee] = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(fee).toMatchObject({
      amountCents: TIER2_MONTHLY_CENTS,
      status: 'INVOICED',
      invoiceId: expect.stringMatching(/^in_/),
    });
    const invoice = double.invoice(fee!.invoiceId!);
    expect(invoice).toMatchObject({
      customer: customerId,
      status: 'open',
      amount_due: TIER2_MONTHLY_CENTS,
      metadata: { chargeKey: fee!.chargeKey, organizationId: owner.organizationId },
    });
    expect(fee!.hostedInvoiceUrl).toBe(invoice!.hosted_invoice_url);
    // Stripe refused to collect without a card; nothing was charged.
    expect(double.requestsTo('POST', `/v1/invoices/${fee!.invoiceId}/pay`).map((r) => r.status)).toEqual([400]);
    expect(double.charges.filter((c) => c.customer === customerId)).toHaveLength(0);
  });

  it('setup-session answers the Stripe checkout URL (one session per organization and minute) and 409 without a processor customer', async () => {
    testClock.freeze();
    const { owner, customerId, as } = await stripeOrganization();
    const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));

    const again = expectData(await invoke(routes.createBillingSetupSession, { ...as, body: urls }));
    expect(again.url).toBe(selected.setupSessionUrl);
    testClock.advance(60);
    const later = expectData(await invoke(routes.createBillingSetupSession, { ...as, body: urls }));
    expect(later.url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    expect(later.url).not.toBe(again.url);

    // Other return URLs in the same minute: a session of their own (Stripe refuses a key reused with other parameters).
    const elsewhere = expectData(
      await invoke(routes.createBillingSetupSession, {
        ...as,
        body: { ...urls, successUrl: 'https://app.example.test/settings/card' },
      }),
    );
    expect([again.url, later.url]).not.toContain(elsewhere.url);

    const sessions = [...double.checkoutSessions.values()].filter((s) => s.customer === customerId);
    expect(sessions.map((s) => s.url).sort()).toEqual([again.url, later.url, elsewhere.url].sort());
    expect(sessions.every((s) => s.mode === 'setup')).toBe(true);
    expect(sessions.find((s) => s.url === elsewhere.url)).toMatchObject({
      success_url: 'https://app.example.test/settings/card',
      cancel_url: urls.cancelUrl,
    });
    const calls = double.requestsTo('POST', '/v1/checkout/sessions').filter((r) => r.body.customer === customerId);
    expect(calls.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const keys = calls.map((r) => r.idempotencyKey);
    expect(new Set(keys).size).toBe(3);
    expect(keys.every((key) => key?.startsWith(`setup-session:${owner.organizationId}:`))).toBe(true);

    await db()
      .update(organizations)
      .set({ processorCustomerId: null })
      .where(eq(organizations.id, owner.organizationId));
    const requestsBefore = double.requests.length;
    expectError(await invoke(routes.createBillingSetupSession, { ...as, body: urls }), 409, 'CONFLICT');
    expect(double.requests.length).toBe(requestsBefore);
  });

  it('a Pro upgrade with a card creates exactly one invoice of one 14,900-cent line and the case becomes Pro', async () => {
    const { owner, customerId, as } = await stripeOrganization({ last4: '4242' });
    expect(expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2' } }))).toMatchObject({
      paymentRequired: false,
      setupSessionUrl: null,
    });
    const legal = await billableCase(owner);
    const chargeKey = `case-pro-upgrade:${legal.id}`;

    expect(expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }))).toEqual({
      caseId: legal.id,
      status: 'processing',
    });

    const invoices = invoicesOfCharge(customerId, chargeKey);
    expect(invoices).toHaveLength(1);
    const invoice = invoices[0]!;
    expect(invoice).toMatchObject({
      status: 'paid',
      collection_method: 'charge_automatically',
      amount_paid: PRO_CENTS,
      metadata: { organizationId: owner.organizationId },
    });
    expect(invoice.lines.data).toHaveLength(1);
    expect(invoice.lines.data[0]).toMatchObject({
      amount: PRO_CENTS,
      currency: 'usd',
      description: expect.stringContaining(legal.name),
    });
    expect(double.charges.filter((c) => c.invoice === invoice.id)).toMatchObject([
      { amount: PRO_CENTS, status: 'succeeded' },
    ]);

    const [row] = await rowsOfCharge(chargeKey);
    expect(row).toMatchObject({
      status: 'paid',
      amountCents: PRO_CENTS,
      invoiceId: invoice.id,
      hostedInvoiceUrl: invoice.hosted_invoice_url,
    });
    expect((await caseRow(legal.id)).isPro).toBe(true);

    // Every Stripe call carried a key derived from the charge key.
    expect(
      double
        .requestsTo('POST', '/v1/invoices')
        .filter((r) => r.body.metadata?.chargeKey === chargeKey)
        .map((r) => r.idempotencyKey),
    ).toEqual([`charge:${chargeKey}:invoice`]);
    expect(
      double
        .requestsTo('POST', '/v1/invoiceitems')
        .filter((r) => r.body.invoice === invoice.id)
        .map((r) => r.idempotencyKey),
    ).toEqual([`charge:${chargeKey}:line:0`]);
    expect(double.requestsTo('POST', `/v1/invoices/${invoice.id}/finalize`).map((r) => r.idempotencyKey)).toEqual([
      `charge:${chargeKey}:finalize`,
    ]);
    expect(double.requestsTo('POST', `/v1/invoices/${invoice.id}/pay`).map((r) => r.idempotencyKey)).toEqual([
      `charge:${chargeKey}:pay`,
    ]);

    expectError(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }), 409, 'CONFLICT');
    expect(invoicesOfCharge(customerId, chargeKey)).toHaveLength(1);
  });

  it('a declined card leaves the rows failed; a failed base fee makes the organization delinquent after 7 days; a good card collects both', async () => {
    const { owner, customerId, as } = await stripeOrganization({ last4: '0002', declines: true });
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2' } }));
    const [fee] = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(fee).toMatchObject({
      status: 'failed',
      amountCents: TIER2_MONTHLY_CENTS,
      invoiceId: expect.stringMatching(/^in_/),
    });
    expect((await organizationRow(owner.organizationId)).baseFeeFailedAt).toBeInstanceOf(Date);

    const legal = await billableCase(owner);
    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
    const [pro] = await rowsOfCharge(`case-pro-upgrade:${legal.id}`);
    expect(pro).toMatchObject({ status: 'failed', invoiceId: expect.stringMatching(/^in_/) });
    expect((await caseRow(legal.id)).isPro).toBe(false);
    expect(double.invoice(pro!.invoiceId!)).toMatchObject({ status: 'open', attempt_count: 1, amount_paid: 0 });
    expect(double.requestsTo('POST', `/v1/invoices/${pro!.invoiceId}/pay`).map((r) => r.status)).toEqual([402]);
    expect(double.charges.filter((c) => c.customer === customerId).map((c) => c.status)).toEqual(['failed', 'failed']);

    expect(expectData(await invoke(routes.getCurrentPlan, as)).delinquent).toBe(false);
    testClock.advance(7 * 86_400 + 60);
    // The access token expired with the week; sign in again.
    const session = expectData(await invoke(routes.login, { body: { email: owner.email, password: owner.password } }));
    const later = { token: session.accessToken, organization: owner.organizationId };
    expect(expectData(await invoke(routes.getCurrentPlan, later)).delinquent).toBe(true);

    // A good card replaces the declining one: the open invoices are collected and the delinquency ends.
    double.attachCard(customerId, { last4: '4242' });
    await collectOpenInvoices(owner.organizationId);
    const settled = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(settled.map((r) => r.status)).toEqual(['paid', 'paid']);
    expect((await caseRow(legal.id)).isPro).toBe(true);
    expect(double.invoice(pro!.invoiceId!)).toMatchObject({ status: 'paid', amount_paid: PRO_CENTS });
    expect(expectData(await invoke(routes.getCurrentPlan, later)).delinquent).toBe(false);
  });

  it('collecting open invoices when one was paid meanwhile at Stripe (hosted page) marks it paid and collects the rest', async () => {
    const { owner, customerId, as } = await stripeOrganization();
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    const legal = await billableCase(owner);
    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
    const open = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(open.map((r) => r.status)).toEqual(['INVOICED', 'INVOICED']);
    const fee = open.find((r) => r.caseId === null)!;

    double.attachCard(customerId, { last4: '4242' });
    // The customer paid the base fee on Stripe's hosted invoice page; no webhook has arrived yet.
    const outOfBand = await fetch(`${double.url}/v1/invoices/${fee.invoiceId}/pay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DOUBLE_SECRET_KEY}` },
    });
    expect(outOfBand.status).toBe(200);

    await collectOpenInvoices(owner.organizationId);
    const settled = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(settled.map((r) => r.status)).toEqual(['paid', 'paid']);
    expect((await caseRow(legal.id)).isPro).toBe(true);
    expect(double.charges.filter((c) => c.invoice === fee.invoiceId)).toHaveLength(1);
    expect(double.requestsTo('POST', `/v1/invoices/${fee.invoiceId}/pay`).map((r) => r.status)).toEqual([
      400, 200, 400,
    ]);
  });

  it('a plan change with the base fee unpaid voids its invoice at Stripe: never collected, even once a card is saved', async () => {
    const { owner, customerId, as } = await stripeOrganization();
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    const [fee] = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    expect(double.invoice(fee!.invoiceId!)).toMatchObject({ status: 'open' });

    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier3', ...urls } }));

    expect(double.invoice(fee!.invoiceId!)).toMatchObject({ status: 'void' });
    expect(double.requestsTo('POST', `/v1/invoices/${fee!.invoiceId}/void`).map((r) => r.status)).toEqual([200]);
    const [voided] = await rowsOfCharge(fee!.chargeKey);
    expect(voided).toMatchObject({ status: 'voided', invoiceClosedAt: expect.any(Date) });

    double.attachCard(customerId, { last4: '4242' });
    await collectOpenInvoices(owner.organizationId);
    expect(double.charges.filter((c) => c.invoice === fee!.invoiceId)).toHaveLength(0);
    expect(double.invoice(fee!.invoiceId!)).toMatchObject({ status: 'void' });
  });

  it('an unpaid base fee paid at Stripe just before the change: the void finds it paid and the payment is kept as credit', async () => {
    const { owner, customerId, as } = await stripeOrganization();
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    const [fee] = await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId));
    double.attachCard(customerId, { last4: '4242' });
    const outOfBand = await fetch(`${double.url}/v1/invoices/${fee!.invoiceId}/pay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DOUBLE_SECRET_KEY}` },
    });
    expect(outOfBand.status).toBe(200);

    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier1', ...urls } }));

    expect(double.invoice(fee!.invoiceId!)).toMatchObject({ status: 'paid' });
    expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(TIER2_MONTHLY_CENTS);
  });

  it('the connection drops on finalize after Stripe created the invoice: the row stays processing and retryStuckCharges finishes it with the same keys', async () => {
    const { owner, customerId, as } = await stripeOrganization({ last4: '4242' });
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2' } }));
    const legal = await billableCase(owner);
    const chargeKey = `case-pro-upgrade:${legal.id}`;
    // The first finalize call fails on every attempt the SDK makes.
    double.failNext('/v1/invoices/:id/finalize', 3, 'drop-before');

    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
    const [stuck] = await rowsOfCharge(chargeKey);
    expect(stuck).toMatchObject({ status: 'processing', invoiceId: null });
    expect((await caseRow(legal.id)).isPro).toBe(false);
    const [draft] = invoicesOfCharge(customerId, chargeKey);
    expect(draft).toMatchObject({ status: 'draft', amount_due: PRO_CENTS });
    expect(
      double.requestsTo('POST', `/v1/invoices/${draft!.id}/finalize`).map((r) => [r.idempotencyKey, r.status]),
    ).toEqual(Array.from({ length: 3 }, () => [`charge:${chargeKey}:finalize`, 'dropped']));

    expect(await retryStuckCharges(0)).toBe(1);
    const [row] = await rowsOfCharge(chargeKey);
    expect(row).toMatchObject({ status: 'paid', invoiceId: draft!.id });
    expect((await caseRow(legal.id)).isPro).toBe(true);

    // Stripe ends with one invoice, one line and one charge: the retry replayed the same keys.
    expect(invoicesOfCharge(customerId, chargeKey)).toHaveLength(1);
    expect(double.invoice(draft!.id)).toMatchObject({ status: 'paid', amount_paid: PRO_CENTS });
    expect([...double.invoiceItems.values()].filter((item) => item.invoice === draft!.id)).toHaveLength(1);
    expect(double.charges.filter((c) => c.invoice === draft!.id)).toMatchObject([
      { status: 'succeeded', amount: PRO_CENTS },
    ]);
    const creates = double.requestsTo('POST', '/v1/invoices').filter((r) => r.body.metadata?.chargeKey === chargeKey);
    expect(creates.map((r) => [r.idempotencyKey, r.replayed])).toEqual([
      [`charge:${chargeKey}:invoice`, false],
      [`charge:${chargeKey}:invoice`, true],
    ]);
    expect(
      double
        .requestsTo('POST', '/v1/invoiceitems')
        .filter((r) => r.body.invoice === draft!.id)
        .map((r) => [r.idempotencyKey, r.replayed]),
    ).toEqual([
      [`charge:${chargeKey}:line:0`, false],
      [`charge:${chargeKey}:line:0`, true],
    ]);
  });

  it('the connection drops after Stripe charged the card: the maintenance run replays the pay call and nothing is charged twice', async () => {
    const { owner, customerId, as } = await stripeOrganization({ last4: '4242' });
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2' } }));
    const legal = await billableCase(owner);
    const chargeKey = `case-pro-upgrade:${legal.id}`;
    double.failNext('/v1/invoices/:id/pay', 3, 'drop-after');

    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
    expect(await rowsOfCharge(chargeKey)).toMatchObject([{ status: 'processing', invoiceId: null }]);
    const [invoice] = invoicesOfCharge(customerId, chargeKey);
    expect(invoice).toMatchObject({ status: 'paid' });

    // Not yet due for a retry, then due.
    await runMaintenance();
    expect(await rowsOfCharge(chargeKey)).toMatchObject([{ status: 'processing' }]);
    testClock.advance(61);
    expect((await runMaintenance()).chargesRetried).toBeGreaterThanOrEqual(1);

    expect(await rowsOfCharge(chargeKey)).toMatchObject([{ status: 'paid', invoiceId: invoice!.id }]);
    expect((await caseRow(legal.id)).isPro).toBe(true);
    expect(invoicesOfCharge(customerId, chargeKey)).toHaveLength(1);
    expect(double.charges.filter((c) => c.invoice === invoice!.id)).toHaveLength(1);
    const pays = double.requestsTo('POST', `/v1/invoices/${invoice!.id}/pay`);
    expect(pays).toHaveLength(4);
    expect(pays.every((r) => r.idempotencyKey === `charge:${chargeKey}:pay`)).toBe(true);
    expect(pays.map((r) => r.replayed)).toEqual([false, true, true, true]);
  });

  it('a 500 from Stripe is retried by the SDK with the same key: one invoice', async () => {
    const { owner, customerId, as } = await stripeOrganization({ last4: '4242' });
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2' } }));
    const legal = await billableCase(owner);
    const chargeKey = `case-pro-upgrade:${legal.id}`;
    double.failNext('/v1/invoices', 1, 500);

    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
    expect(await rowsOfCharge(chargeKey)).toMatchObject([{ status: 'paid' }]);
    expect(invoicesOfCharge(customerId, chargeKey)).toHaveLength(1);
    const creates = double.requestsTo('POST', '/v1/invoices').filter((r) => r.body.metadata?.chargeKey === chargeKey);
    expect(creates.map((r) => [r.status, r.idempotencyKey])).toEqual([
      [500, `charge:${chargeKey}:invoice`],
      [200, `charge:${chargeKey}:invoice`],
    ]);
  });

  it('credits pay first and only the remainder is invoiced; credits covering it all invoice nothing', async () => {
    const { owner, customerId, as } = await stripeOrganization({ last4: '4242' });
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier4' } }));
    await grantCredits(owner.organizationId, 5_000, 'Goodwill');

    const partly = await billableCase(owner);
    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: partly.id } }));
    const [invoice, ...others] = invoicesOfCharge(customerId, `case-pro-upgrade:${partly.id}`);
    expect(others).toHaveLength(0);
    expect(invoice!.lines.data.map((line: { amount: number }) => line.amount)).toEqual([PRO_CENTS - 5_000]);
    expect(invoice).toMatchObject({ status: 'paid', amount_paid: PRO_CENTS - 5_000 });
    expect(await rowsOfCharge(`case-pro-upgrade:${partly.id}`)).toMatchObject([
      { amountCents: PRO_CENTS, creditsAppliedCents: 5_000, status: 'paid' },
    ]);
    expect(expectData(await invoke(routes.getCredits, as)).balanceCents).toBe(0);

    await grantCredits(owner.organizationId, 20_000, 'Prepaid');
    const whole = await billableCase(owner);
    const requestsBefore = double.requests.length;
    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: whole.id } }));
    expect(double.requests.length).toBe(requestsBefore);
    expect(await rowsOfCharge(`case-pro-upgrade:${whole.id}`)).toMatchObject([
      { creditsAppliedCents: PRO_CENTS, status: 'paid', invoiceId: null },
    ]);
    expect((await caseRow(whole.id)).isPro).toBe(true);
    const credits = expectData(await invoke(routes.getCredits, as));
    expect(credits.balanceCents).toBe(20_000 - PRO_CENTS);
    expect(
      credits.ledger
        .filter((e: { kind: string }) => e.kind === 'charge')
        .map((e: { amountCents: number }) => e.amountCents),
    ).toEqual([-PRO_CENTS, -5_000]);
    expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(20_000 - PRO_CENTS);
  });
});
