import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { keepPaymentAsCredit } from '../../lib/billing/adjust-credits';
import { retryVoidedInvoices } from '../../lib/billing/close-voided-invoice';
import { invoiceCharge } from '../../lib/billing/invoice-charge';
import { transaction } from '../../lib/db/transaction';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { SandboxProcessor } from '../../lib/billing/processor/sandbox';
import { TIERS } from '../../lib/billing/tiers';
import { addMonths, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { billingRows, devices, organizationPlans, sandboxInvoices } from '../../lib/db/schema';
import { planUsageByOrganization } from '../../lib/organizations/active-plan';
import { addMember, createCaseRow, createUser, type TestUser, uniqueEmail, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import {
  as,
  caseRow,
  completeCheckoutOf,
  current,
  invite,
  ledgerOf,
  putOnPlan,
  rowsOfOrganization,
  sandboxProcessorWith,
  urls,
  usageStat,
} from '../harness/billing';
import { caseWithAccess } from '../harness/cases';
import { organizationRow } from '../harness/organizations';

const selectPlan = (user: TestUser, body: Record<string, unknown>) =>
  invoke(routes.selectPlan, { ...as(user), body: { ...urls, ...body } });
const credits = async (user: TestUser) => expectData(await invoke(routes.getCredits, as(user)));
const upgrade = (user: TestUser, caseId: string) => invoke(routes.upgradeCaseToPro, { ...as(user), path: { caseId } });

async function invoiceStatus(invoiceId: string) {
  const [invoice] = await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.id, invoiceId));
  return invoice!.status;
}

afterEach(() => {
  usePaymentProcessor(undefined);
});

describe('plan selection: no money from an unpaid fee', () => {
  it('tier7 annual then tier1 monthly with no card: no credit appears, the tier7 invoice is voided, the used part is billed', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier7');
    const [tier7Fee] = await rowsOfOrganization(owner.organizationId);
    expect(tier7Fee).toMatchObject({ amountCents: 2_999_000, status: 'INVOICED' });
    testClock.advance(3600);
    owner = await signIn(owner);

    const data = expectData(await selectPlan(owner, { tier: 'tier1', cadence: 'monthly' }));

    // One hour of an annual tier7 is used: it is owed, not credited.
    const periodMs = addMonths(tier7Fee!.periodStart!, 12).getTime() - tier7Fee!.periodStart!.getTime();
    const used = 2_999_000 - Math.floor((2_999_000 * (periodMs - 3_600_000)) / periodMs);
    expect(data.prorationCents).toBe(4_900 + used);
    expect((await credits(owner)).balanceCents).toBe(0);
    expect(await ledgerOf(owner.organizationId)).toEqual([]);
    const rows = await rowsOfOrganization(owner.organizationId);
    expect(rows.find((r) => r.id === tier7Fee!.id)!.status).toBe('voided');
    expect(await invoiceStatus(tier7Fee!.invoiceId!)).toBe('void');
    const usedLine = rows.find((r) => r.skuKey === 'platform_base_fee_used')!;
    expect(usedLine).toMatchObject({ amountCents: used, status: 'INVOICED' });
    expect(usedLine.description).toContain(`invoice ${tier7Fee!.invoiceId} voided`);
    expect(rows.some((r) => r.skuKey === 'platform_base_fee_proration')).toBe(false);
  });

  it('switching back and forth without paying never makes a balance', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier7');
    for (const [tier, cadence] of [
      ['tier1', 'monthly'],
      ['tier7', 'annual'],
      ['tier2', 'annual'],
      ['tier1', 'monthly'],
    ] as const) {
      const data = expectData(await selectPlan(owner, { tier, cadence }));
      expect(data.prorationCents).toBeGreaterThanOrEqual(0);
    }

    expect((await credits(owner)).balanceCents).toBe(0);
    const rows = await rowsOfOrganization(owner.organizationId);
    // Only the newest charge is open; every earlier one was voided, and its invoice with it.
    const open = rows.filter((r) => r.status === 'INVOICED');
    expect(new Set(open.map((r) => r.chargeKey)).size).toBe(1);
    for (const row of rows.filter((r) => r.status === 'voided' && r.invoiceId))
      expect(await invoiceStatus(row.invoiceId!)).toBe('void');
  });

  it('a paid tier7 moved to tier1 at once credits what was paid for the rest of the year', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier7', { card: true });
    testClock.advance(3600);
    owner = await signIn(owner);
    const [fee] = await rowsOfOrganization(owner.organizationId);
    expect(fee!.status).toBe('paid');
    const periodMs = addMonths(fee!.periodStart!, 12).getTime() - fee!.periodStart!.getTime();
    const unused = Math.floor((2_999_000 * (periodMs - 3_600_000)) / periodMs);

    const data = expectData(await selectPlan(owner, { tier: 'tier1', cadence: 'monthly' }));

    expect(data.prorationCents).toBe(4_900 - unused);
    expect((await credits(owner)).balanceCents).toBe(unused - 4_900);
  });

  it('an old fee paid at the processor just before the change: the change bills it as unpaid, the void finds it paid and keeps the payment as credit', async () => {
    const owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier3');
    const [fee] = await rowsOfOrganization(owner.organizationId);
    // Paid on the hosted invoice page; the webhook has not arrived yet.
    await db().update(sandboxInvoices).set({ status: 'paid' }).where(eq(sandboxInvoices.id, fee!.invoiceId!));

    const data = expectData(await selectPlan(owner, { tier: 'tier1', cadence: 'monthly' }));

    // At the same instant nothing of the tier3 month is used: the net is the new fee alone.
    expect(data.prorationCents).toBe(4_900);
    const row = (await rowsOfOrganization(owner.organizationId)).find((r) => r.id === fee!.id)!;
    expect(row.status).toBe('voided');
    expect(row.invoiceClosedAt).toBeInstanceOf(Date);
    expect(await invoiceStatus(fee!.invoiceId!)).toBe('paid');
    const ledger = await ledgerOf(owner.organizationId);
    expect(ledger.map((e) => [e.kind, e.amountCents, e.idempotencyKey])).toEqual([
      ['refund', 19_900, `voided-charge-payment:${fee!.invoiceId}`],
    ]);
    expect((await credits(owner)).balanceCents).toBe(19_900);
  });

  it('an invoice the processor cannot void now is voided by maintenance later, once', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier3');
    const [fee] = await rowsOfOrganization(owner.organizationId);
    usePaymentProcessor(
      sandboxProcessorWith({
        voidInvoice: async () => {
          throw new Error('processor unreachable');
        },
      }),
    );

    expectData(await selectPlan(owner, { tier: 'tier1', cadence: 'monthly' }));

    expect((await rowsOfOrganization(owner.organizationId)).find((r) => r.id === fee!.id)).toMatchObject({
      status: 'voided',
      invoiceClosedAt: null,
    });
    expect(await invoiceStatus(fee!.invoiceId!)).toBe('open');
    usePaymentProcessor(undefined);
    testClock.advance(120);
    expect(await retryVoidedInvoices()).toBe(1);
    expect(await invoiceStatus(fee!.invoiceId!)).toBe('void');
    expect(await retryVoidedInvoices()).toBe(0);
    expect((await credits(await signIn(owner))).balanceCents).toBe(0);
  });

  it('a charge voided while its invoice was being made: money the processor took is kept as credit, once', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true });
    const sandbox = new SandboxProcessor();
    // The invoice call of the new charge is held back until the plan changed again.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    usePaymentProcessor(
      sandboxProcessorWith({
        chargeInvoice: async (input) => {
          await held;
          return sandbox.chargeInvoice(input);
        },
      }),
    );
    const selection = selectPlan(owner, { tier: 'tier3', cadence: 'monthly' });
    // The after-commit invoicing waits on `held`; meanwhile the rows are processing with no invoice.
    await expect
      .poll(async () =>
        (await rowsOfOrganization(owner.organizationId)).some((r) => r.skuKey === 'platform_base_fee_tier3_monthly'),
      )
      .toBe(true);
    const tier3 = (await rowsOfOrganization(owner.organizationId)).find(
      (r) => r.skuKey === 'platform_base_fee_tier3_monthly',
    )!;
    await db().update(billingRows).set({ status: 'voided' }).where(eq(billingRows.chargeKey, tier3.chargeKey));
    release();
    expectData(await selection);

    const ledger = await ledgerOf(owner.organizationId);
    const kept = ledger.filter((entry) => entry.idempotencyKey?.startsWith('voided-charge-payment:'));
    expect(kept).toHaveLength(1);
    const [invoice] = await db()
      .select()
      .from(sandboxInvoices)
      .where(eq(sandboxInvoices.id, kept[0]!.idempotencyKey!.split(':')[1]!));
    expect(invoice!.status).toBe('paid');
    expect(kept[0]!.amountCents).toBe(invoice!.amountCents);
    expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(invoice!.amountCents);
    // Told again (a retry, a webhook): nothing more is credited.
    await transaction((tx) => keepPaymentAsCredit(tx, owner.organizationId, invoice!.id, invoice!.amountCents));
    expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(invoice!.amountCents);
    await invoiceCharge(tier3.chargeKey);
    expect(await ledgerOf(owner.organizationId)).toHaveLength(ledger.length);
  });
});

describe('plan selection: the tier chosen is the plan enforced', () => {
  it('tier5 with 4 seats used: activePlan and usages-stat show tier5, and 2 more people can be invited', async () => {
    const owner = await createUser();
    for (let i = 0; i < 3; i += 1) await addMember(owner.organizationId, 'member');
    await putOnPlan(owner, 'tier5');

    expectData(await invite(owner, [uniqueEmail(), uniqueEmail()]), 201);

    const usage = await usageStat(owner);
    expect(usage).toMatchObject({
      planType: 'tier5',
      seats: TIERS.tier5.seatCap,
      seatsUsed: 6,
      devices: TIERS.tier5.deviceCap,
      storage: TIERS.tier5.storageCapBytes,
    });
    const mine = expectData(await invoke(routes.listMyOrganizations, { token: owner.accessToken }));
    const entry = mine.data.find((o: any) => o.organization.id === owner.organizationId);
    expect(entry.organization.activePlan).toMatchObject({
      type: 'tier5',
      seats: 50,
      devices: 50,
      storage: TIERS.tier5.storageCapBytes,
      isFreePlan: false,
    });
    expect((await current(owner)).usage.seats).toEqual({ used: 6, cap: 50 });
  });

  it('a downgrade below the seats in use is 409 PLAN_BELOW_USAGE naming seats; nothing changes, nothing is charged', async () => {
    const owner = await createUser();
    for (let i = 0; i < 3; i += 1) await addMember(owner.organizationId, 'member');
    await putOnPlan(owner, 'tier5');
    const rowsBefore = await rowsOfOrganization(owner.organizationId);

    const result = await selectPlan(owner, { tier: 'tier1', cadence: 'monthly' });

    expectError(result, 409, 'PLAN_BELOW_USAGE', ['seats']);
    expect(result.body.error.details).toEqual([
      { path: 'seats', message: '4 seats in use (members and pending invitations); tier1 allows 2' },
    ]);
    expect((await organizationRow(owner.organizationId)).billingTier).toBe('tier5');
    expect(await rowsOfOrganization(owner.organizationId)).toEqual(rowsBefore);
    const [plan] = await db()
      .select()
      .from(organizationPlans)
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expect(plan).toMatchObject({ type: 'tier5', seats: 50 });
  });

  it('a first selection below usage is refused too, and devices and storage are named with the new caps', async () => {
    const owner = await createUser();
    for (let i = 0; i < 3; i += 1) await addMember(owner.organizationId, 'member');
    await db()
      .insert(devices)
      .values(
        [1, 2].map((n) => ({
          organizationId: owner.organizationId,
          deviceId: `device-${n}`,
          deviceType: 'android' as const,
          metadata: {},
        })),
      );
    await db()
      .update(organizationPlans)
      .set({ devices: 3, storageBytes: 100 * 1024 ** 3 })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    await db()
      .insert(devices)
      .values({ organizationId: owner.organizationId, deviceId: 'device-3', deviceType: 'ios', metadata: {} });
    await createCaseRow(owner.organizationId, { storageBytes: 30 * 1024 ** 3 });

    const result = await selectPlan(owner, { tier: 'tier1' });

    expectError(result, 409, 'PLAN_BELOW_USAGE', ['seats', 'devices', 'storage']);
    expect((await organizationRow(owner.organizationId)).billingMode).toBe('free');
    expect(await rowsOfOrganization(owner.organizationId)).toEqual([]);
  });
});

describe('plan selection: unpaid fees have consequences', () => {
  it('without a card: baseFeeStatus open, plan-included Pro within 7 days, delinquent after 7, then Pro and upgrades are 403 DELINQUENT', async () => {
    let owner = await createUser();
    testClock.freeze();
    const selected = await putOnPlan(owner, 'tier5');
    const early = await caseWithAccess(owner.organizationId, owner);
    expect((await current(owner)).plan.baseFeeStatus).toBe('open');
    expect((await current(owner)).delinquent).toBe(false);
    expectData(await upgrade(owner, early.id));
    expect((await caseRow(early.id)).isPro).toBe(true);

    testClock.advance(7 * 86_400 + 60);
    owner = await signIn(owner);
    const late = await caseWithAccess(owner.organizationId, owner);

    expect((await current(owner)).delinquent).toBe(true);
    expectError(await upgrade(owner, late.id), 403, 'DELINQUENT');
    expect((await caseRow(late.id)).isPro).toBe(false);
    expectError(await selectPlan(owner, { tier: 'tier6' }), 403, 'DELINQUENT');
    expectError(await selectPlan(owner, { tier: 'tier5', cadence: 'annual' }), 403, 'DELINQUENT');
    // Reads keep working and nothing is deleted.
    expect((await caseRow(early.id)).isPro).toBe(true);
    expect(expectData(await invoke(routes.getReconciliation, as(owner))).groups.length).toBeGreaterThan(0);

    // A downgrade stays open, and does not reset the clock.
    expectData(await selectPlan(owner, { tier: 'tier4' }));
    expect((await current(owner)).delinquent).toBe(true);
    expectError(await upgrade(owner, late.id), 403, 'DELINQUENT');

    // Saving a card collects what is open and clears it.
    await completeCheckoutOf(selected.setupSessionUrl);
    const after = await current(owner);
    expect(after.delinquent).toBe(false);
    expect(after.plan.baseFeeStatus).toBe('paid');
    expectData(await upgrade(owner, late.id));
  });

  it('a declined card: baseFeeStatus failed, delinquent 7 days after the failure', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier2', { card: '4000 0000 0000 0002' });
    expect((await current(owner)).plan.baseFeeStatus).toBe('failed');
    testClock.advance(6 * 86_400);
    owner = await signIn(owner);
    expect((await current(owner)).delinquent).toBe(false);
    testClock.advance(86_400 + 60);
    owner = await signIn(owner);
    expect((await current(owner)).delinquent).toBe(true);
  });

  it('a base fee collected with the card is baseFeeStatus paid, and the organization is not delinquent', async () => {
    const paid = await createUser();
    await putOnPlan(paid, 'tier1', { card: true });
    const plan = await current(paid);
    expect(plan.plan.baseFeeStatus).toBe('paid');
    expect(plan.delinquent).toBe(false);
    expect((await organizationRow(paid.organizationId)).baseFeeFailedAt).toBeNull();
  });
});

describe.runIf(inject('databaseTemplate').kind === 'postgres')(
  'plan selection under concurrency (PostgreSQL server)',
  () => {
    it('a downgrade racing invitations never leaves more seats taken than the plan allows', async () => {
      const owner = await createUser();
      await putOnPlan(owner, 'tier2', { card: true });

      // tier1 allows 2 seats; the owner holds one. Four invitations and the downgrade race.
      const results = await Promise.all([
        selectPlan(owner, { tier: 'tier1', cadence: 'monthly' }),
        ...Array.from({ length: 4 }, () => invite(owner, [uniqueEmail()])),
      ]);

      const [selection, ...invites] = results;
      expect([200, 409]).toContain(selection!.status);
      for (const result of invites) expect([201, 403]).toContain(result.status);
      const usage = (await planUsageByOrganization(db(), [owner.organizationId])).get(owner.organizationId)!;
      expect(usage.seatsUsed).toBeLessThanOrEqual(usage.plan.seats);
      expect(usage.plan.type).toBe(selection!.status === 200 ? 'tier1' : 'tier2');
      expect(usage.seatsUsed).toBe(1 + invites.filter((r) => r.status === 201).length);
    });

    it('concurrent changes of plan settle the old fee once: one open charge, no credit from nothing', async () => {
      const owner = await createUser();
      await putOnPlan(owner, 'tier7');

      const results = await Promise.all(
        (['tier1', 'tier2', 'tier3', 'tier4'] as const).map((tier) => selectPlan(owner, { tier, cadence: 'monthly' })),
      );

      for (const result of results) expect(result.status).toBe(200);
      expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(0);
      const rows = await rowsOfOrganization(owner.organizationId);
      expect(new Set(rows.filter((r) => r.status === 'INVOICED').map((r) => r.chargeKey)).size).toBe(1);
      expect(rows.filter((r) => r.skuKey === 'platform_base_fee_tier7_annual').map((r) => r.status)).toEqual([
        'voided',
      ]);
    });
  },
);
