import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { DELINQUENCY_DAYS } from '../../lib/billing/summary';
import { TIERS } from '../../lib/billing/tiers';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { cases, organizations } from '../../lib/db/schema';
import { FREE_PLAN } from '../../lib/organizations/plans';
import { createUser, type TestUser, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, current, declineEveryCharge, putOnPlan, urls } from '../harness/billing';

/**
 * Issue 30 item 3: `casesPerMonth` is enforced on POST /cases, under the allowance lock: 403
 * CASE_LIMIT_REACHED naming the cap and when it resets (the first of the next month, UTC). A
 * deleted case still counts; a delinquent organization is held to the last paid plan's cap.
 */

/** Concurrency only shows on a server with real parallel connections (PGlite runs one query at a time). */
const onServer = inject('databaseTemplate').kind === 'postgres';
const DAY = 24 * 60 * 60;

/** The 10th of next month, noon UTC: far from a month boundary whatever the day the suite runs. */
function midMonth(): Date {
  const at = new Date();
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 10, 12));
}
const firstOfNextMonth = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));

const create = (user: TestUser, name = 'Matter') => invoke(routes.createCase, { ...as(user), body: { name } });

async function createN(user: TestUser, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) ids.push(expectData(await create(user, `Matter ${i}`), 201).id);
  return ids;
}

afterEach(() => {
  testClock.reset();
  usePaymentProcessor(undefined);
});

describe('cases per month', () => {
  it('tier1 allows 5 cases a month: the 6th is 403 CASE_LIMIT_REACHED naming the cap and the reset', async () => {
    const at = midMonth();
    testClock.freeze(at);
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });
    await createN(owner, TIERS.tier1.casesPerMonth!);
    const refused = await create(owner);
    expectError(refused, 403, 'CASE_LIMIT_REACHED', ['casesPerMonth', 'resetsAt']);
    const resetsAt = firstOfNextMonth(at).toISOString();
    expect(refused.body.error.message).toContain('5 new cases a month');
    expect(refused.body.error.message).toContain(resetsAt);
    expect(refused.body.error.details).toEqual([
      { path: 'casesPerMonth', message: '5' },
      { path: 'createdThisMonth', message: '5' },
      { path: 'resetsAt', message: resetsAt },
    ]);
    // Nothing was created by the refused request.
    expect(await db().select().from(cases).where(eq(cases.organizationId, owner.organizationId))).toHaveLength(5);
    expect((await current(owner)).usage.cases).toEqual({ createdThisMonth: 5, cap: 5 });
  });

  it('the allowance comes back on the first of the next month (UTC), not before', async () => {
    const at = midMonth();
    testClock.freeze(at);
    let owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true, cadence: 'annual' });
    await createN(owner, 5);
    // The last instant of the month: still this month's allowance.
    testClock.freeze(new Date(firstOfNextMonth(at).getTime() - 1));
    owner = await signIn(owner);
    expectError(await create(owner), 403, 'CASE_LIMIT_REACHED');
    testClock.advance(0.001);
    expectData(await create(owner), 201);
    expect((await current(owner)).usage.cases).toEqual({ createdThisMonth: 1, cap: 5 });
  });

  it('a deleted case still counts: deleting gives no case back', async () => {
    testClock.freeze(midMonth());
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });
    const [first] = await createN(owner, 5);
    expectData(await invoke(routes.deleteCase, { ...as(owner), path: { caseId: first! } }));
    expectError(await create(owner), 403, 'CASE_LIMIT_REACHED');
    expect((await current(owner)).usage.cases).toEqual({ createdThisMonth: 5, cap: 5 });
  });

  it(`the free plan allows ${FREE_PLAN.casesPerMonth} cases a month`, async () => {
    testClock.freeze(midMonth());
    const owner = await createUser();
    await createN(owner, FREE_PLAN.casesPerMonth);
    const refused = await create(owner);
    expectError(refused, 403, 'CASE_LIMIT_REACHED');
    expect(refused.body.error.details[0]).toEqual({ path: 'casesPerMonth', message: String(FREE_PLAN.casesPerMonth) });
    expect((await current(owner)).usage.cases).toEqual({
      createdThisMonth: FREE_PLAN.casesPerMonth,
      cap: FREE_PLAN.casesPerMonth,
    });
  });

  it('tier5 and above have no cap; the other organization is untouched by one at its cap', async () => {
    testClock.freeze(midMonth());
    const unlimited = await createUser();
    await putOnPlan(unlimited, 'tier5', { card: true });
    const capped = await createUser();
    await putOnPlan(capped, 'tier1', { card: true });
    await createN(capped, 5);
    expectError(await create(capped), 403, 'CASE_LIMIT_REACHED');
    await createN(unlimited, 8);
    expect((await current(unlimited)).usage.cases).toEqual({ createdThisMonth: 8, cap: null });
    expect((await current(capped)).usage.cases).toEqual({ createdThisMonth: 5, cap: 5 });
  });

  it('a legacy subscription keeps no case cap', async () => {
    testClock.freeze(midMonth());
    const owner = await createUser();
    await db().update(organizations).set({ billingMode: 'legacy' }).where(eq(organizations.id, owner.organizationId));
    await createN(owner, FREE_PLAN.casesPerMonth + 2);
    expect((await current(owner)).usage.cases).toEqual({ createdThisMonth: FREE_PLAN.casesPerMonth + 2, cap: null });
  });

  it('a delinquent organization that never paid is held to the free plan, one that paid tier2 to tier2', async () => {
    testClock.freeze(midMonth());
    let never = await createUser();
    await putOnPlan(never, 'tier7');
    // Within its days to pay, tier7 has no cap.
    await createN(never, FREE_PLAN.casesPerMonth + 1);
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    never = await signIn(never);
    const held = await create(never);
    expectError(held, 403, 'CASE_LIMIT_REACHED');
    expect(held.body.error.details[0]).toEqual({ path: 'casesPerMonth', message: String(FREE_PLAN.casesPerMonth) });

    let paid = await createUser();
    await putOnPlan(paid, 'tier2', { card: true });
    declineEveryCharge();
    expectData(await invoke(routes.selectPlan, { ...as(paid), body: { tier: 'tier7', cadence: 'annual', ...urls } }));
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    paid = await signIn(paid);
    expect((await current(paid)).enforcedPlan).toMatchObject({ tier: 'tier2', basis: 'last_paid' });
    await createN(paid, TIERS.tier2.casesPerMonth!);
    const capped = await create(paid);
    expectError(capped, 403, 'CASE_LIMIT_REACHED');
    expect(capped.body.error.details[0]).toEqual({ path: 'casesPerMonth', message: String(TIERS.tier2.casesPerMonth) });
  });

  it.runIf(onServer)('20 concurrent POST /cases at 2 below the cap create exactly 2 (PostgreSQL server)', async () => {
    testClock.freeze(midMonth());
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });
    await createN(owner, 3);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create(owner, `Race ${i}`)));
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(2);
    for (const result of results.filter((r) => r.status !== 201)) expectError(result, 403, 'CASE_LIMIT_REACHED');
    expect(await db().select().from(cases).where(eq(cases.organizationId, owner.organizationId))).toHaveLength(5);
  });
});
