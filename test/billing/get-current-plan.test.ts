import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { TIERS } from '../../lib/billing/tiers';
import { addDays, addMonths, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { organizations } from '../../lib/db/schema';
import { FREE_PLAN } from '../../lib/organizations/plans';
import { addMember, createCaseRow, createUser, type TestUser, signIn } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { as, DECLINED_CARD, putOnPlan, rowsOfOrganization, sessionIdOf, urls } from '../harness/billing';
import { organizationRow } from '../harness/organizations';
import { describeSecurity } from '../harness/security';

const currentPlan = (user: TestUser) => invoke(routes.getCurrentPlan, as(user));

describe('GET /billing/plan/current', () => {
  describeSecurity(routes.getCurrentPlan, { request: () => ({}), succeeds: true });

  it('answers plan null for a free organization, with usage against the free allowance still returned', async () => {
    const owner = await createUser();
    await addMember(owner.organizationId, 'member');
    await createCaseRow(owner.organizationId, { storageBytes: 1_000 });

    const data = expectData(await currentPlan(owner));

    expect(data).toEqual({
      plan: null,
      enforcedPlan: { tier: null, basis: 'plan', includesPro: false, payBy: null },
      usage: {
        seats: { used: 2, cap: FREE_PLAN.seats },
        devices: { used: 0, cap: FREE_PLAN.devices },
        storage: { usedBytes: 1_000, reservedBytes: 0, capBytes: FREE_PLAN.storageBytes },
        cases: { createdThisMonth: 1, cap: FREE_PLAN.casesPerMonth },
      },
      delinquent: false,
    });
  });

  it('answers plan null for a legacy-billed organization', async () => {
    const owner = await createUser();
    await db()
      .update(organizations)
      .set({ billingMode: 'legacy', billingTier: 'tier2' })
      .where(eq(organizations.id, owner.organizationId));

    expect(expectData(await currentPlan(owner)).plan).toBeNull();
  });

  it('answers the plan after a selection: tier, cadence, mode, base price, period, no card yet; caps from the tier', async () => {
    const owner = await createUser();
    testClock.freeze();
    const at = now();
    await putOnPlan(owner, 'tier3', { cadence: 'annual' });

    const data = expectData(await currentPlan(owner));

    expect(data.plan).toEqual({
      tier: 'tier3',
      tierName: 'Team',
      cadence: 'annual',
      billingMode: 'pay_as_you_go',
      basePriceCents: 199_000,
      periodStart: at.toISOString(),
      periodEnd: addMonths(at, 12).toISOString(),
      paymentMethod: null,
      baseFeeStatus: 'open',
    });
    expect(data.usage).toMatchObject({
      seats: { used: 1, cap: TIERS.tier3.seatCap },
      devices: { used: 0, cap: TIERS.tier3.deviceCap },
      storage: { capBytes: TIERS.tier3.storageCapBytes },
      cases: { cap: TIERS.tier3.casesPerMonth },
    });
    expect(data.delinquent).toBe(false);
  });

  it('names the card that will be charged once one is saved', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: '5555 5555 5555 4444' });

    expect(expectData(await currentPlan(owner)).plan.paymentMethod).toEqual({ type: 'card', last4: '4444' });
  });

  it("counts this month's cases only (not last month's; a deleted case still counts, as on POST /cases)", async () => {
    const owner = await createUser();
    const at = now();
    const monthStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    const lastMonth = new Date(monthStart.getTime() - 1_000);
    await createCaseRow(owner.organizationId);
    await createCaseRow(owner.organizationId, { createdAt: lastMonth });
    await createCaseRow(owner.organizationId, { deletedAt: at });
    const other = await createUser();
    await createCaseRow(other.organizationId);

    const data = expectData(await currentPlan(owner));

    expect(data.usage.cases.createdThisMonth).toBe(2);
  });

  it('is delinquent only when a base fee failed more than 7 days ago', async () => {
    let owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true });
    testClock.freeze();
    await db().update(organizations).set({ baseFeeFailedAt: now() }).where(eq(organizations.id, owner.organizationId));
    expect(expectData(await currentPlan(owner)).delinquent).toBe(false);

    testClock.advance(7 * 86_400);
    owner = await signIn(owner);
    expect(expectData(await currentPlan(owner)).delinquent).toBe(false);

    testClock.advance(1);
    expect(expectData(await currentPlan(owner)).delinquent).toBe(true);
  });

  it('a declined base fee turns delinquent after 7 days; paying it with a new card clears it', async () => {
    let owner = await createUser();
    testClock.freeze();
    const failedAt = now();
    await putOnPlan(owner, 'tier2', { card: DECLINED_CARD });
    const [fee] = await rowsOfOrganization(owner.organizationId);
    expect(fee!.status).toBe('failed');
    expect((await organizationRow(owner.organizationId)).baseFeeFailedAt).toEqual(failedAt);
    expect(expectData(await currentPlan(owner)).delinquent).toBe(false);

    testClock.advance(7 * 86_400 + 60);
    owner = await signIn(owner);
    expect(addDays(failedAt, 7) < now()).toBe(true);
    expect(expectData(await currentPlan(owner)).delinquent).toBe(true);

    const session = expectData(await invoke(routes.createBillingSetupSession, { ...as(owner), body: urls }));
    await completeSandboxCheckout(sessionIdOf(session.url), '4242 4242 4242 4242');

    const [paid] = await rowsOfOrganization(owner.organizationId);
    expect(paid!.status).toBe('paid');
    expect((await organizationRow(owner.organizationId)).baseFeeFailedAt).toBeNull();
    const data = expectData(await currentPlan(owner));
    expect(data.delinquent).toBe(false);
    expect(data.plan.paymentMethod).toEqual({ type: 'card', last4: '4242' });
  });
});
