import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { DELINQUENCY_DAYS } from '../../lib/billing/summary';
import { TIERS } from '../../lib/billing/tiers';
import { testClock } from '../../lib/clock';
import { FREE_PLAN } from '../../lib/organizations/plans';
import { createUser, type TestUser, uniqueEmail, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import {
  as,
  completeCheckoutOf,
  current,
  declineEveryCharge,
  invite,
  putOnPlan,
  urls,
  usageStat,
} from '../harness/billing';

/**
 * Issue 30 item 2: a tier's caps follow its payment. An unpaid selection raises the caps for the
 * days its fee may still be paid; once delinquent, everything new is held to the last paid plan
 * (the free plan when none was), and paying restores the tier's caps at once.
 */

const DAY = 24 * 60 * 60;
const GiB = 1024 ** 3;

const emails = (n: number) => Array.from({ length: n }, () => uniqueEmail('seat'));
const uploadLink = (user: TestUser, caseId: string, sizeBytes: number) =>
  invoke(routes.createImport, {
    ...as(user),
    path: { caseId },
    body: { kind: 'email', fileName: 'export.mbox', contentType: 'application/mbox', sizeBytes },
  });
const selectPlan = (user: TestUser, body: Record<string, unknown>) =>
  invoke(routes.selectPlan, { ...as(user), body: { ...urls, ...body } });

afterEach(() => {
  testClock.reset();
  usePaymentProcessor(undefined);
});

describe('caps follow payment', () => {
  it('an unpaid tier7 selection gives its caps for 7 days, then the free caps; the summary says why', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier7');
    const within = await current(owner);
    expect(within.usage.seats.cap).toBe(TIERS.tier7.seatCap);
    expect(within.enforcedPlan).toMatchObject({ tier: 'tier7', basis: 'awaiting_payment' });
    expect(within.enforcedPlan.payBy).toEqual(expect.any(String));

    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    const after = await current(owner);
    expect(after.delinquent).toBe(true);
    expect(after.plan.tier).toBe('tier7');
    expect(after.enforcedPlan).toMatchObject({ tier: null, basis: 'free', payBy: null });
    expect(after.usage.seats.cap).toBe(FREE_PLAN.seats);
    expect(after.usage.devices.cap).toBe(FREE_PLAN.devices);
    expect(after.usage.storage.capBytes).toBe(FREE_PLAN.storageBytes);
    const stat = await usageStat(owner);
    expect(stat).toMatchObject({ seats: FREE_PLAN.seats, devices: FREE_PLAN.devices, storage: FREE_PLAN.storageBytes });
    expect(stat.enforcedPlan).toMatchObject({ tier: null, basis: 'free' });

    // Seats: the owner plus four fit the free plan's five; a sixth does not.
    expectError(await invite(owner, emails(5)), 403, 'SEAT_LIMIT_REACHED');
    expectData(await invite(owner, emails(4)), 201);
    // Storage: the free plan's 5 GiB, not tier7's 5 TiB.
    const { id: caseId } = expectData(await invoke(routes.createCase, { ...as(owner), body: { name: 'Matter' } }), 201);
    expectError(await uploadLink(owner, caseId, 5 * GiB + 1), 403, 'STORAGE_LIMIT_REACHED');
  });

  it('a delinquent "downgrade" to tier6 keeps the free caps, not tier6 caps', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier7');
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    expectData(await selectPlan(owner, { tier: 'tier6' }));
    const after = await current(owner);
    expect(after.plan.tier).toBe('tier6');
    expect(after.enforcedPlan).toMatchObject({ basis: 'free' });
    expect(after.usage.seats.cap).toBe(FREE_PLAN.seats);
    expectError(await invite(owner, emails(5)), 403, 'SEAT_LIMIT_REACHED');
  });

  it('delinquent after a paid tier2: held to tier2, the lower of the last paid and the selected tier', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier2', { card: true });
    // The card is declined from now on: the move to tier7 charges it and fails.
    declineEveryCharge();
    expectData(await selectPlan(owner, { tier: 'tier7', cadence: 'annual' }));
    const declined = await current(owner);
    expect(declined.enforcedPlan).toMatchObject({ tier: 'tier7', basis: 'awaiting_payment' });
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    const after = await current(owner);
    expect(after.delinquent).toBe(true);
    expect(after.enforcedPlan).toMatchObject({ tier: 'tier2', basis: 'last_paid' });
    expect(after.usage.seats.cap).toBe(TIERS.tier2.seatCap);
  });

  it('delinquent on a never-paid tier1: the free plan, but never above tier1 (2 seats, not 5)', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier1');
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    const after = await current(owner);
    expect(after.enforcedPlan).toMatchObject({ tier: null, basis: 'free' });
    expect(after.usage.seats.cap).toBe(TIERS.tier1.seatCap);
    expect(after.usage.devices.cap).toBe(Math.min(FREE_PLAN.devices, TIERS.tier1.deviceCap));
    expect(after.usage.storage.capBytes).toBe(FREE_PLAN.storageBytes);
    expect(after.usage.cases.cap).toBe(FREE_PLAN.casesPerMonth);
    expectError(await invite(owner, emails(2)), 403, 'SEAT_LIMIT_REACHED');
  });

  it('paying restores the tier caps at once', async () => {
    let owner = await createUser();
    testClock.freeze();
    const selected = await putOnPlan(owner, 'tier7');
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    expect((await current(owner)).usage.seats.cap).toBe(FREE_PLAN.seats);
    await completeCheckoutOf(selected.setupSessionUrl);
    const paid = await current(owner);
    expect(paid.delinquent).toBe(false);
    expect(paid.enforcedPlan).toMatchObject({ tier: 'tier7', basis: 'selected' });
    expect(paid.usage.seats.cap).toBe(TIERS.tier7.seatCap);
    expectData(await invite(owner, emails(20)), 201);
  });
});
