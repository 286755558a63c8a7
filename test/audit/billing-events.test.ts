import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { eventHash, GENESIS_HASH, STAFF_ACTOR, withAuditScope } from '../../lib/audit';
import { grantCredits } from '../../lib/billing/admin';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { PRO_UPGRADE_SKU } from '../../lib/billing/tiers';
import { db } from '../../lib/db/client';
import { cases, organizations } from '../../lib/db/schema';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { useTemporaryObjectStorage } from '../harness/object-storage';
import { expectData, expectError } from '../harness/invoke';
import { useStripeDouble } from '../harness/stripe-double';
import {
  as,
  caseRow,
  onTierWithoutCharges,
  putOnPlan,
  rowsOfCase,
  rowsOfOrganization,
  sessionIdOf,
  urls,
} from '../harness/billing';
import { caseWithAccess } from '../harness/cases';
import { organizationRow } from '../harness/organizations';
import { type AuditRow, auditChainOf, auditEventsOfRequest, invokeAudited } from '../harness/audit';

/**
 * The billing domain's audit events, through the real handlers: each route writes its event in
 * the transaction of its change (exactly one per request, by the caller), a refused request writes
 * none, and what the processor reports is recorded by the system.
 */

/** Invokes `route` with a request id of its own, to find what this request wrote. */
const send = invokeAudited;

const eventsOfRequest = auditEventsOfRequest;

const eventsOf = (organizationId: string, afterSequence = 0) => auditChainOf(organizationId, afterSequence);

/** The organization's last sequence: events after it are what the test wrote. */
async function headOf(organizationId: string): Promise<number> {
  return (await eventsOf(organizationId)).at(-1)?.sequence ?? 0;
}

/** The organization's chain is whole: 1, 2, 3… each hash recomputed and linked to the one before. */
async function expectChained(organizationId: string): Promise<void> {
  const events = await eventsOf(organizationId);
  let prevHash = GENESIS_HASH;
  events.forEach((event, index) => {
    expect(event.sequence).toBe(index + 1);
    expect(event.prevHash).toBe(prevHash);
    expect(eventHash(event)).toBe(event.hash);
    prevHash = event.hash;
  });
}

/** The one event `requestId` wrote, checked to be the caller's, from the request. */
async function onlyEventOf(requestId: string, user: TestUser): Promise<AuditRow> {
  const events = await eventsOfRequest(requestId);
  expect(
    events.map((e) => e.action),
    'one event per request',
  ).toHaveLength(1);
  const [event] = events;
  expect(event).toMatchObject({
    actorType: 'user',
    actorUserId: user.id,
    userAgent: 'vitest',
    clientRequestId: requestId,
  });
  expect(event!.tokenId).toEqual(expect.any(String));
  return event!;
}

afterEach(() => {
  usePaymentProcessor(undefined);
});

describe('POST /cases/{caseId}/pro-upgrade records case.pro_upgrade.requested', () => {
  const upgrade = (user: TestUser, caseId: string) => send(routes.upgradeCaseToPro, { ...as(user), path: { caseId } });

  it('with the card: the case, the amount in cents, the charge and how it is paid; the invoice the processor pays at once is a system event of no request', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true });
    const target = await caseWithAccess(owner.organizationId, owner);
    const head = await headOf(owner.organizationId);

    const { result, requestId } = await upgrade(owner, target.id);

    expect(expectData(result)).toEqual({ caseId: target.id, status: 'processing' });
    const [row] = await rowsOfCase(target.id);
    expect(row).toMatchObject({ status: 'paid', invoiceId: expect.any(String) });
    const event = await onlyEventOf(requestId, owner);
    expect(event).toMatchObject({
      action: 'case.pro_upgrade.requested',
      organizationId: owner.organizationId,
      caseId: target.id,
      targetType: 'case',
      targetId: target.id,
      metadata: {
        chargeKey: `case-pro-upgrade:${target.id}`,
        billingRowId: row!.id,
        amountCents: 14_900,
        listAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
        creditsAppliedCents: 0,
        invoicedCents: 14_900,
        paidWith: 'card',
      },
    });
    // The processor's answer to the invoice made after the commit: by the system, outside the request.
    const written = await eventsOf(owner.organizationId, head);
    expect(written.map((e) => [e.action, e.actorType, e.clientRequestId])).toEqual([
      ['case.pro_upgrade.requested', 'user', requestId],
      ['billing.processor_event.received', 'system', null],
    ]);
    expect(written[1]).toMatchObject({
      actorUserId: null,
      ip: null,
      targetType: 'invoice',
      targetId: row!.invoiceId,
      metadata: {
        type: 'invoice.paid',
        processorEventId: null,
        invoiceId: row!.invoiceId,
        outcome: 'paid',
        rowsSettled: 1,
      },
    });
    expect((await caseRow(target.id)).isPro).toBe(true);
    await expectChained(owner.organizationId);
  });

  it.each([
    ['credits', 20_000, 14_900, 0],
    ['credits_and_card', 5_000, 5_000, 9_900],
  ] as const)(
    'paid with %s: the credits applied and the invoiced part in cents',
    async (paidWith, granted, credits, invoiced) => {
      const owner = await createUser();
      await putOnPlan(owner, 'tier4', { card: true });
      await grantCredits(owner.organizationId, granted, 'Prepaid');
      const target = await caseWithAccess(owner.organizationId, owner);

      const { result, requestId } = await upgrade(owner, target.id);

      expectData(result);
      expect(await onlyEventOf(requestId, owner)).toMatchObject({
        action: 'case.pro_upgrade.requested',
        caseId: target.id,
        metadata: { amountCents: 14_900, creditsAppliedCents: credits, invoicedCents: invoiced, paidWith },
      });
      const [row] = await rowsOfCase(target.id);
      expect(row!.creditsAppliedCents).toBe(credits);
    },
  );

  it('on a tier that includes Pro: paid with the plan, 0 cents charged', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier5', { card: true });
    const target = await caseWithAccess(owner.organizationId, owner);
    const head = await headOf(owner.organizationId);

    const { result, requestId } = await upgrade(owner, target.id);

    expectData(result);
    const [row] = await rowsOfCase(target.id);
    expect(await onlyEventOf(requestId, owner)).toMatchObject({
      action: 'case.pro_upgrade.requested',
      caseId: target.id,
      metadata: {
        chargeKey: `case-pro-plan:${target.id}`,
        billingRowId: row!.id,
        amountCents: 0,
        listAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
        paidWith: 'plan',
      },
    });
    expect(await eventsOf(owner.organizationId, head)).toHaveLength(1);
  });

  it('records nothing when refused (already Pro, not on case billing) or when the charge already exists', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2');
    const open = await caseWithAccess(owner.organizationId, owner);
    // No card: the charge stays open, the case not Pro yet.
    const first = await upgrade(owner, open.id);
    expectData(first.result);
    expect((await eventsOfRequest(first.requestId)).map((e) => e.action)).toEqual(['case.pro_upgrade.requested']);
    const head = await headOf(owner.organizationId);

    const repeat = await upgrade(owner, open.id);
    expect(expectData(repeat.result)).toEqual({ caseId: open.id, status: 'processing' });
    expect(await rowsOfCase(open.id)).toHaveLength(1);

    const pro = await caseWithAccess(owner.organizationId, owner);
    await db().update(cases).set({ isPro: true }).where(eq(cases.id, pro.id));
    const already = await upgrade(owner, pro.id);
    expectError(already.result, 409, 'CONFLICT');

    const free = await createUser();
    const freeCase = await caseWithAccess(free.organizationId, free);
    const freeHead = await headOf(free.organizationId);
    const off = await upgrade(free, freeCase.id);
    expectError(off.result, 403, 'FEATURE_DISABLED');

    expect(await eventsOf(owner.organizationId, head)).toEqual([]);
    expect(await eventsOf(free.organizationId, freeHead)).toEqual([]);
    for (const { requestId } of [repeat, already, off]) expect(await eventsOfRequest(requestId)).toEqual([]);
  });
});

describe('POST /billing/setup-session records billing.setup_session.created', () => {
  const setupSession = (user: TestUser) => send(routes.createBillingSetupSession, { ...as(user), body: urls });

  it('names the processor session it handed out', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2');

    const { result, requestId } = await setupSession(owner);

    const { url } = expectData(result);
    expect(await onlyEventOf(requestId, owner)).toMatchObject({
      action: 'billing.setup_session.created',
      organizationId: owner.organizationId,
      caseId: null,
      targetType: 'setup_session',
      targetId: sessionIdOf(url),
      metadata: { successUrl: urls.successUrl, cancelUrl: urls.cancelUrl },
    });
    await expectChained(owner.organizationId);
  });

  it('records nothing when refused: not on case billing (403), no processor customer (409)', async () => {
    const free = await createUser();
    const freeHead = await headOf(free.organizationId);
    const off = await setupSession(free);
    expectError(off.result, 403, 'FEATURE_DISABLED');

    const owner = await createUser();
    await putOnPlan(owner, 'tier2');
    await db()
      .update(organizations)
      .set({ processorCustomerId: null })
      .where(eq(organizations.id, owner.organizationId));
    const head = await headOf(owner.organizationId);
    const conflict = await setupSession(owner);
    expectError(conflict.result, 409, 'CONFLICT');

    expect(await eventsOf(free.organizationId, freeHead)).toEqual([]);
    expect(await eventsOf(owner.organizationId, head)).toEqual([]);
  });
});

describe('POST /billing/plan records billing.plan.selected', () => {
  const selectPlan = (user: TestUser, body: Record<string, unknown>) =>
    send(routes.selectPlan, { ...as(user), body: { ...urls, ...body } });

  it('a first selection: tier, cadence, the previous tier, the base fee and its charge, the set-up link', async () => {
    const owner = await createUser();
    const before = await organizationRow(owner.organizationId);

    const { result, requestId } = await selectPlan(owner, { tier: 'tier1' });

    const answer = expectData(result);
    const after = await organizationRow(owner.organizationId);
    expect(await onlyEventOf(requestId, owner)).toMatchObject({
      action: 'billing.plan.selected',
      organizationId: owner.organizationId,
      targetType: 'organization',
      targetId: owner.organizationId,
      metadata: {
        tier: 'tier1',
        cadence: 'monthly',
        previousTier: before.billingTier,
        previousCadence: before.billingCadence,
        previousBillingMode: before.billingMode,
        changed: true,
        baseFeeCents: 4_900,
        prorationCents: 0,
        chargeKey: after.baseFeeChargeKey,
        paymentRequired: true,
        setupSessionId: sessionIdOf(answer.setupSessionUrl),
      },
    });
    await expectChained(owner.organizationId);
  });

  it('a change: the previous tier and the net proration in cents; a repeat records changed: false', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });

    const change = await selectPlan(owner, { tier: 'tier3', cadence: 'annual' });

    const answer = expectData(change.result);
    expect(answer.prorationCents).not.toBe(0);
    const after = await organizationRow(owner.organizationId);
    expect(await onlyEventOf(change.requestId, owner)).toMatchObject({
      action: 'billing.plan.selected',
      metadata: {
        tier: 'tier3',
        cadence: 'annual',
        previousTier: 'tier1',
        previousCadence: 'monthly',
        previousBillingMode: 'pay_as_you_go',
        changed: true,
        baseFeeCents: 199_000,
        prorationCents: answer.prorationCents,
        chargeKey: after.baseFeeChargeKey,
        paymentRequired: false,
        setupSessionId: null,
      },
    });

    const repeat = await selectPlan(owner, { tier: 'tier3', cadence: 'annual' });
    expect(expectData(repeat.result).prorationCents).toBe(0);
    expect(await onlyEventOf(repeat.requestId, owner)).toMatchObject({
      action: 'billing.plan.selected',
      metadata: { tier: 'tier3', previousTier: 'tier3', changed: false, chargeKey: null, prorationCents: 0 },
    });
    expect((await organizationRow(owner.organizationId)).baseFeeChargeKey).toBe(after.baseFeeChargeKey);
    await expectChained(owner.organizationId);
  });

  it('records nothing when refused: below usage (409), invalid cadence (400)', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier3', { card: true });
    // tier1 has 2 seats: three members do not fit.
    await addMember(owner.organizationId, 'member');
    await addMember(owner.organizationId, 'member');
    const head = await headOf(owner.organizationId);
    const rowsBefore = await rowsOfOrganization(owner.organizationId);

    const below = await selectPlan(owner, { tier: 'tier1' });
    expectError(below.result, 409, 'PLAN_BELOW_USAGE');
    const invalid = await selectPlan(owner, { tier: 'tier6', cadence: 'monthly' });
    expectError(invalid.result, 400, 'VALIDATION_FAILED');

    expect(await rowsOfOrganization(owner.organizationId)).toHaveLength(rowsBefore.length);
    expect(await eventsOf(owner.organizationId, head)).toEqual([]);
  });
});

describe('POST /billing/report records billing.report.created', () => {
  useTemporaryObjectStorage('billing-audit');
  const window = { startDate: '2026-01-01T00:00:00.000Z', endDate: '2026-01-31T23:59:59.999Z' };
  const report = (user: TestUser, body: Record<string, unknown>) =>
    send(routes.createBillingReport, { ...as(user), body });

  it('a stored PDF: its object key, the range and format, where the link expires', async () => {
    const owner = await createUser();
    await onTierWithoutCharges(owner.organizationId, 'tier3');
    const target = await caseWithAccess(owner.organizationId, owner);

    const { result, requestId } = await report(owner, { format: 'pdf', caseIds: [target.id], ...window });

    const data = expectData(result);
    expect(await onlyEventOf(requestId, owner)).toMatchObject({
      action: 'billing.report.created',
      organizationId: owner.organizationId,
      targetType: 'billing_report',
      // generated/organizations/<orgId>/reports/<documentId>/<fileName>
      targetId: data.storageKey.split('/')[4],
      metadata: {
        format: 'pdf',
        ...window,
        caseIds: [target.id],
        rowCount: 0,
        storageKey: data.storageKey,
        sizeBytes: data.sizeBytes,
        linkExpiresAt: data.expiresAt,
      },
    });
    await expectChained(owner.organizationId);
  });

  it('a JSON report: the range and format, no object', async () => {
    const owner = await createUser();
    await onTierWithoutCharges(owner.organizationId, 'tier3');

    const { result, requestId } = await report(owner, { format: 'json', ...window });

    expectData(result);
    expect(await onlyEventOf(requestId, owner)).toMatchObject({
      action: 'billing.report.created',
      targetType: null,
      metadata: { format: 'json', ...window, caseIds: null, rowCount: 0, storageKey: null },
    });
  });

  it('records nothing when refused (startDate after endDate)', async () => {
    const owner = await createUser();
    await onTierWithoutCharges(owner.organizationId, 'tier3');
    const head = await headOf(owner.organizationId);

    const refused = await report(owner, { format: 'pdf', startDate: window.endDate, endDate: window.startDate });

    expectError(refused.result, 400, 'VALIDATION_FAILED');
    expect(await eventsOf(owner.organizationId, head)).toEqual([]);
  });
});

describe('POST /webhooks/stripe records billing.processor_event.received', () => {
  const double = useStripeDouble();

  async function deliver(type: string, object: Record<string, any>, options: { id?: string } = {}) {
    const { event, rawBody, signature } = double.signedEvent(type, object, options);
    const { result, requestId } = await send(routes.stripeWebhook, {
      rawBody,
      headers: { 'stripe-signature': signature },
    });
    return { event, result, requestId };
  }

  /** An organization on tier2 with no card: its base fee is an open invoice at Stripe. */
  async function organizationWithOpenInvoice() {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2');
    const [fee] = await rowsOfOrganization(owner.organizationId);
    expect(fee).toMatchObject({ status: 'INVOICED', invoiceId: expect.stringMatching(/^in_/) });
    const { processorCustomerId } = await organizationRow(owner.organizationId);
    return { owner, fee: fee!, customerId: processorCustomerId! };
  }

  it('invoice.paid: one event by the system with the type and event id; a replay, or an invoice not ours, records nothing', async () => {
    const { owner, fee } = await organizationWithOpenInvoice();
    const head = await headOf(owner.organizationId);
    const invoice = { ...double.invoice(fee.invoiceId!)!, status: 'paid' };

    const { event, result, requestId } = await deliver('invoice.paid', invoice);

    expect(expectData(result)).toEqual({ received: true, duplicate: false });
    const events = await eventsOfRequest(requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'billing.processor_event.received',
      organizationId: owner.organizationId,
      actorType: 'system',
      actorUserId: null,
      tokenId: null,
      caseId: null,
      targetType: 'invoice',
      targetId: fee.invoiceId,
      metadata: {
        type: 'invoice.paid',
        processorEventId: event.id,
        invoiceId: fee.invoiceId,
        outcome: 'paid',
        rowsSettled: 1,
      },
    });

    const replay = await deliver('invoice.paid', invoice, { id: event.id });
    expect(expectData(replay.result)).toEqual({ received: true, duplicate: true });
    // A second event about the invoice already paid changes nothing either.
    const again = await deliver('invoice.paid', invoice);
    expect(expectData(again.result)).toEqual({ received: true, duplicate: false });
    const notOurs = await deliver('invoice.paid', { id: 'in_not_ours', object: 'invoice', status: 'paid' });
    expectData(notOurs.result);
    for (const { requestId: id } of [replay, again, notOurs]) expect(await eventsOfRequest(id)).toEqual([]);
    expect((await eventsOf(owner.organizationId, head)).map((e) => e.clientRequestId)).toEqual([requestId]);
    await expectChained(owner.organizationId);
  });

  it('invoice.payment_failed: the outcome; the same outcome again records nothing', async () => {
    const { owner, fee } = await organizationWithOpenInvoice();
    const invoice = { ...double.invoice(fee.invoiceId!)!, attempt_count: 1 };

    const failed = await deliver('invoice.payment_failed', invoice);

    expectData(failed.result);
    expect(await eventsOfRequest(failed.requestId)).toMatchObject([
      {
        organizationId: owner.organizationId,
        actorType: 'system',
        metadata: { type: 'invoice.payment_failed', processorEventId: failed.event.id, outcome: 'failed' },
      },
    ]);
    const again = await deliver('invoice.payment_failed', { ...invoice, attempt_count: 2 });
    expectData(again.result);
    expect(await eventsOfRequest(again.requestId)).toEqual([]);
  });

  it('payment_method.attached: the card saved; the collection it starts is a system event of no request; the same card again records nothing', async () => {
    const { owner, fee, customerId } = await organizationWithOpenInvoice();
    const head = await headOf(owner.organizationId);
    const method = double.attachCard(customerId, { last4: '1881' });

    const { event, result, requestId } = await deliver('payment_method.attached', method);

    expectData(result);
    expect(await eventsOfRequest(requestId)).toMatchObject([
      {
        action: 'billing.processor_event.received',
        actorType: 'system',
        targetType: 'processor_customer',
        targetId: customerId,
        metadata: { type: 'payment_method.attached', processorEventId: event.id, cardLast4: '1881' },
      },
    ]);
    const written = await eventsOf(owner.organizationId, head);
    expect(written.map((e) => [e.metadata.type, e.clientRequestId])).toEqual([
      ['payment_method.attached', requestId],
      ['invoice.paid', null],
    ]);
    expect(written[1]).toMatchObject({ targetId: fee.invoiceId, metadata: { processorEventId: null } });

    // Checkout completing for the card already on file (no last4 in that event): nothing changes.
    const completed = await deliver('checkout.session.completed', {
      id: 'cs_double_again',
      object: 'checkout.session',
      mode: 'setup',
      customer: customerId,
      status: 'complete',
    });
    expectData(completed.result);
    expect(await eventsOfRequest(completed.requestId)).toEqual([]);
    await expectChained(owner.organizationId);
  });
});

describe('the sandbox checkout page', () => {
  it('records the card saved like the checkout.session.completed event it stands for, with no request', async () => {
    const owner = await createUser();
    const selected = await putOnPlan(owner, 'tier2');
    const head = await headOf(owner.organizationId);
    const { processorCustomerId } = await organizationRow(owner.organizationId);

    await completeSandboxCheckout(sessionIdOf(selected.setupSessionUrl), '4242 4242 4242 4242');

    const written = await eventsOf(owner.organizationId, head);
    expect(written.map((e) => [e.action, e.actorType, e.requestId, e.metadata.type])).toEqual([
      ['billing.processor_event.received', 'system', null, 'checkout.session.completed'],
      ['billing.processor_event.received', 'system', null, 'invoice.paid'],
    ]);
    expect(written[0]).toMatchObject({
      targetId: processorCustomerId,
      metadata: { processorEventId: null, cardLast4: '4242' },
    });
  });
});

describe('grantCredits records billing.credits.granted', () => {
  const staffScope = (requestId: string) => ({ actor: STAFF_ACTOR, ip: null, userAgent: null, requestId });

  it('by the staff scope it runs in: the amount and the balance in cents, never the reason', async () => {
    const owner = await createUser();
    const head = await headOf(owner.organizationId);

    const balance = await withAuditScope(staffScope('cli-grant-1'), () =>
      grantCredits(owner.organizationId, 5_000, 'Apology for the outage on the 3rd'),
    );
    const taken = await withAuditScope(staffScope('cli-grant-2'), () =>
      grantCredits(owner.organizationId, -1_500, 'Entered twice'),
    );

    expect([balance, taken]).toEqual([5_000, 3_500]);
    const written = await eventsOf(owner.organizationId, head);
    expect(written).toMatchObject([
      {
        action: 'billing.credits.granted',
        actorType: 'staff',
        actorUserId: null,
        tokenId: null,
        requestId: 'cli-grant-1',
        targetType: 'organization',
        targetId: owner.organizationId,
        metadata: { amountCents: 5_000, balanceAfterCents: 5_000 },
      },
      {
        action: 'billing.credits.granted',
        actorType: 'staff',
        metadata: { amountCents: -1_500, balanceAfterCents: 3_500 },
      },
    ]);
    expect(JSON.stringify(written)).not.toMatch(/outage|twice/);
    await expectChained(owner.organizationId);
  });

  it('records nothing when refused (below zero) or for an unknown organization', async () => {
    const owner = await createUser();
    const head = await headOf(owner.organizationId);

    await expect(
      withAuditScope(staffScope('cli-refused'), () => grantCredits(owner.organizationId, -1, 'Too much')),
    ).rejects.toThrow(/cannot go below zero/);
    const unknown = await withAuditScope(staffScope('cli-unknown'), () =>
      grantCredits('00000000-0000-4000-8000-000000000000', 100, 'Nobody'),
    );

    expect(unknown).toBeNull();
    expect(await eventsOf(owner.organizationId, head)).toEqual([]);
    expect(await eventsOfRequest('cli-refused')).toEqual([]);
    expect(await eventsOfRequest('cli-unknown')).toEqual([]);
  });
});
