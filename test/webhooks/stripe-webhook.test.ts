import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { billingHistory, billingRows, caseAccess, cases, processedWebhookEvents } from '../../lib/db/schema';
import { createCaseRow, createUser } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeOptions } from '../harness/invoke';
import { useStripeDouble } from '../harness/stripe-double';
import { describeSecurity } from '../harness/security';
import { organizationRow } from '../harness/organizations';

const urls = {
  successUrl: 'https://app.example.test/billing/done',
  cancelUrl: 'https://app.example.test/billing/cancel',
};

const double = useStripeDouble();

/** Delivers a signed event to POST /webhooks/stripe the way Stripe does. */
async function deliver(type: string, object: Record<string, any>, options: { id?: string } = {}) {
  const { event, rawBody, signature } = double.signedEvent(type, object, options);
  const result = await invoke(routes.stripeWebhook, { rawBody, headers: { 'stripe-signature': signature } });
  return { event, result };
}

async function rowsOf(organizationId: string) {
  return db().select().from(billingRows).where(eq(billingRows.organizationId, organizationId));
}

async function historyOf(organizationId: string, category: (typeof billingHistory.$inferSelect)['category']) {
  return db()
    .select()
    .from(billingHistory)
    .where(and(eq(billingHistory.organizationId, organizationId), eq(billingHistory.category, category)));
}

/**
 * An organization on tier2 with no card: its base fee is an open invoice at Stripe; with `proCase`
 * a case's Pro upgrade is a second open invoice.
 */
async function organizationWithOpenInvoices(options: { proCase?: boolean } = {}) {
  const owner = await createUser();
  const as = { token: owner.accessToken, organization: owner.organizationId };
  const customerId = (await organizationRow(owner.organizationId)).processorCustomerId!;
  expect(customerId).toMatch(/^cus_/);
  const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
  const session = [...double.checkoutSessions.values()].find((s) => s.url === selected.setupSessionUrl)!;
  let legal: { id: string } | undefined;
  if (options.proCase) {
    legal = await createCaseRow(owner.organizationId);
    await db().insert(caseAccess).values({ caseId: legal.id, userId: owner.id, access: 'owner' });
    expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }));
  }
  const rows = await rowsOf(owner.organizationId);
  expect(rows.every((r) => r.status === 'INVOICED' && r.invoiceId?.startsWith('in_'))).toBe(true);
  const fee = rows.find((r) => r.caseId === null)!;
  const pro = rows.find((r) => r.caseId !== null);
  return { owner, as, customerId, session, fee, pro, legal };
}

describe('POST /webhooks/stripe', () => {
  it('invoice.paid marks the rows of that invoice paid and makes the Pro case Pro; a replay has no second effect', async () => {
    const { owner, fee, pro, legal } = await organizationWithOpenInvoices({ proCase: true });
    const invoice = { ...double.invoice(pro!.invoiceId!)!, status: 'paid' };

    const { event, result } = await deliver('invoice.paid', invoice);
    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    const rows = await rowsOf(owner.organizationId);
    expect(rows.find((r) => r.id === pro!.id)!.status).toBe('paid');
    expect(rows.find((r) => r.id === fee.id)!.status).toBe('INVOICED');
    const [proCase] = await db().select().from(cases).where(eq(cases.id, legal!.id));
    expect(proCase!.isPro).toBe(true);
    const history = await historyOf(owner.organizationId, 'invoicing');
    expect(history.map((h) => h.description)).toEqual([`1 billing row(s) paid (invoice ${pro!.invoiceId})`]);

    const replay = await deliver('invoice.paid', invoice, { id: event.id });
    expect(expectData(replay.result)).toEqual({ received: true, duplicate: true });
    expect(await historyOf(owner.organizationId, 'invoicing')).toHaveLength(1);
    const [recorded] = await db()
      .select()
      .from(processedWebhookEvents)
      .where(eq(processedWebhookEvents.eventId, event.id));
    expect(recorded).toMatchObject({ type: 'invoice.paid' });
  });

  it('invoice.payment_failed marks the rows failed; the delinquency clock started at the selection without a card keeps its time', async () => {
    const { owner, fee, pro } = await organizationWithOpenInvoices({ proCase: true });
    // No card to collect the base fee with: it counts as failed from the selection on.
    const clockStarted = (await organizationRow(owner.organizationId)).baseFeeFailedAt;
    expect(clockStarted).toBeInstanceOf(Date);

    const { result } = await deliver('invoice.payment_failed', {
      ...double.invoice(fee.invoiceId!)!,
      attempt_count: 1,
    });
    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    const rows = await rowsOf(owner.organizationId);
    expect(rows.find((r) => r.id === fee.id)!.status).toBe('failed');
    expect(rows.find((r) => r.id === pro!.id)!.status).toBe('INVOICED');
    expect((await organizationRow(owner.organizationId)).baseFeeFailedAt).toEqual(clockStarted);
  });

  it('checkout.session.completed (setup) records the card and collects the open invoices at Stripe', async () => {
    const { owner, customerId, session, fee, pro, legal } = await organizationWithOpenInvoices({ proCase: true });
    // Checkout saved the card at Stripe (attached, not yet the invoice default); the webhook tells us.
    double.attachCard(customerId, { last4: '4242', asDefault: false });

    const { result } = await deliver('checkout.session.completed', { ...session, status: 'complete' });
    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    const organization = await organizationRow(owner.organizationId);
    expect(organization.hasPaymentMethod).toBe(true);
    expect(organization.paymentMethodLast4).toBeNull();
    expect((await historyOf(owner.organizationId, 'payment_method')).map((h) => h.description)).toEqual([
      'Card saved for payments',
    ]);

    expect((await rowsOf(owner.organizationId)).map((r) => r.status)).toEqual(['paid', 'paid']);
    expect(double.customers.get(customerId)!.invoice_settings.default_payment_method).toMatch(/^pm_/);
    expect(double.invoice(fee.invoiceId!)).toMatchObject({ status: 'paid', amount_paid: 9_900 });
    expect(double.invoice(pro!.invoiceId!)).toMatchObject({ status: 'paid', amount_paid: 14_900 });
    const [proCase] = await db().select().from(cases).where(eq(cases.id, legal!.id));
    expect(proCase!.isPro).toBe(true);
  });

  it('checkout.session.completed in payment mode records no card', async () => {
    const { owner, session } = await organizationWithOpenInvoices();
    const { result } = await deliver('checkout.session.completed', { ...session, mode: 'payment', status: 'complete' });
    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    expect((await organizationRow(owner.organizationId)).hasPaymentMethod).toBe(false);
    expect(await historyOf(owner.organizationId, 'payment_method')).toHaveLength(0);
  });

  it('payment_method.attached records the card with its last4 and collects; a replay adds no second history entry', async () => {
    const { owner, customerId, fee } = await organizationWithOpenInvoices();
    const method = double.attachCard(customerId, { last4: '1881' });

    const { event, result } = await deliver('payment_method.attached', method);
    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    const organization = await organizationRow(owner.organizationId);
    expect(organization).toMatchObject({ hasPaymentMethod: true, paymentMethodLast4: '1881' });
    expect(await rowsOf(owner.organizationId)).toMatchObject([{ id: fee.id, status: 'paid' }]);
    expect(double.charges.filter((c) => c.customer === customerId)).toMatchObject([
      { invoice: fee.invoiceId, status: 'succeeded' },
    ]);
    const history = await historyOf(owner.organizationId, 'payment_method');
    expect(history.map((h) => h.description)).toEqual(['Card ending 1881 saved for payments']);

    const payCalls = double.requestsTo('POST', '/v1/invoices/:id/pay').length;
    const replay = await deliver('payment_method.attached', method, { id: event.id });
    expect(expectData(replay.result)).toEqual({ received: true, duplicate: true });
    expect(await historyOf(owner.organizationId, 'payment_method')).toHaveLength(1);
    expect(double.requestsTo('POST', '/v1/invoices/:id/pay')).toHaveLength(payCalls);

    // A later card (new event) replaces the last4.
    const next = double.attachCard(customerId, { last4: '5556' });
    expectData((await deliver('payment_method.attached', next)).result);
    expect((await organizationRow(owner.organizationId)).paymentMethodLast4).toBe('5556');
    expect(await historyOf(owner.organizationId, 'payment_method')).toHaveLength(2);
  });

  it('a bad or missing signature is 400 INVALID_SIGNATURE and records nothing', async () => {
    const { owner, fee } = await organizationWithOpenInvoices();
    const invoice = { ...double.invoice(fee.invoiceId!)!, status: 'paid' };
    const good = double.signedEvent('invoice.paid', invoice);
    const otherSecret = double.signedEvent('invoice.paid', invoice, {
      id: good.event.id,
      secret: 'whsec_someone_else_0123456789',
    });
    const stale = double.signedEvent('invoice.paid', invoice, {
      id: good.event.id,
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });

    const attempts: InvokeOptions[] = [
      { rawBody: good.rawBody, headers: {} },
      { rawBody: good.rawBody, headers: { 'stripe-signature': '' } },
      { rawBody: good.rawBody, headers: { 'stripe-signature': 'garbage' } },
      { rawBody: otherSecret.rawBody, headers: { 'stripe-signature': otherSecret.signature } },
      { rawBody: stale.rawBody, headers: { 'stripe-signature': stale.signature } },
      // The signature of the genuine body over a tampered one.
      {
        rawBody: good.rawBody.replace(`"${fee.invoiceId}"`, '"in_forged"'),
        headers: { 'stripe-signature': good.signature },
      },
    ];
    for (const attempt of attempts) {
      expectError(await invoke(routes.stripeWebhook, attempt), 400, 'INVALID_SIGNATURE');
    }
    expect((await rowsOf(owner.organizationId))[0]!.status).toBe('INVOICED');
    expect(
      await db().select().from(processedWebhookEvents).where(eq(processedWebhookEvents.eventId, good.event.id)),
    ).toHaveLength(0);

    // The genuine delivery still works: nothing of the rejected ones was recorded.
    const accepted = await invoke(routes.stripeWebhook, {
      rawBody: good.rawBody,
      headers: { 'stripe-signature': good.signature },
    });
    expect(expectData(accepted)).toEqual({ received: true, duplicate: false });
    expect((await rowsOf(owner.organizationId))[0]!.status).toBe('paid');
  });

  it('answers 404 while no STRIPE_WEBHOOK_SECRET is configured', async () => {
    const { event, rawBody, signature } = double.signedEvent('customer.created', { id: 'cus_x', object: 'customer' });
    const restoreSecret = overrideConfig({ STRIPE_WEBHOOK_SECRET: undefined });
    try {
      expectError(
        await invoke(routes.stripeWebhook, { rawBody, headers: { 'stripe-signature': signature } }),
        404,
        'NOT_FOUND',
      );
    } finally {
      restoreSecret();
    }
    expect(
      await db().select().from(processedWebhookEvents).where(eq(processedWebhookEvents.eventId, event.id)),
    ).toHaveLength(0);
  });

  it('acknowledges an event type it does not handle, once', async () => {
    const object = { id: 'sub_double_1', object: 'subscription', customer: 'cus_unknown', status: 'trialing' };
    const { event, result } = await deliver('customer.subscription.trial_will_end', object);
    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    expect(
      await db().select().from(processedWebhookEvents).where(eq(processedWebhookEvents.eventId, event.id)),
    ).toMatchObject([{ type: 'customer.subscription.trial_will_end' }]);
    expect(
      expectData((await deliver('customer.subscription.trial_will_end', object, { id: event.id })).result),
    ).toEqual({ received: true, duplicate: true });
  });

  it('acknowledges events about invoices and customers it does not know without changing anything', async () => {
    const { owner } = await organizationWithOpenInvoices();
    const paid = await deliver('invoice.paid', {
      id: 'in_not_ours',
      object: 'invoice',
      customer: 'cus_not_ours',
      status: 'paid',
    });
    expect(expectData(paid.result)).toEqual({ received: true, duplicate: false });
    const attached = await deliver('payment_method.attached', {
      id: 'pm_not_ours',
      object: 'payment_method',
      type: 'card',
      customer: 'cus_not_ours',
      card: { last4: '4242' },
    });
    expect(expectData(attached.result)).toEqual({ received: true, duplicate: false });
    expect((await rowsOf(owner.organizationId)).map((r) => r.status)).toEqual(['INVOICED']);
    expect((await organizationRow(owner.organizationId)).hasPaymentMethod).toBe(false);
  });
});

describeSecurity(routes.stripeWebhook, {
  // An event that changes something (an organization's open invoice paid), so the suite also sees its audit event.
  request: async () => {
    const { fee } = await organizationWithOpenInvoices();
    const { rawBody, signature } = double.signedEvent('invoice.paid', {
      ...double.invoice(fee.invoiceId!)!,
      status: 'paid',
    });
    return { rawBody, headers: { 'stripe-signature': signature } };
  },
});
