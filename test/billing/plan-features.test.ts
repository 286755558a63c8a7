import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { DELINQUENCY_DAYS } from '../../lib/billing/summary';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { organizations } from '../../lib/db/schema';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, putOnPlan, signIn } from './billing-helpers';

/**
 * Issue 30 item 3: each feature the catalog lists gates what it names, following the plan
 * enforced (benefits follow payment): 403 FEATURE_NOT_IN_PLAN naming the feature and the lowest
 * tier that includes it.
 */

const DAY = 24 * 60 * 60;
const report = (user: TestUser) => invoke(routes.createBillingReport, { ...as(user), body: { format: 'json' } });

afterEach(() => testClock.reset());

describe('billing_reports (tier3 and above)', () => {
  it('answers 403 FEATURE_NOT_IN_PLAN on the free plan, naming the feature and tier3', async () => {
    const owner = await createUser();
    const refused = await report(owner);
    expectError(refused, 403, 'FEATURE_NOT_IN_PLAN');
    expect(refused.body.error.message).toBe(
      'The plan does not include billing_reports: it comes with Team (tier3) and above',
    );
    expect(refused.body.error.details).toEqual([
      { path: 'feature', message: 'billing_reports' },
      { path: 'lowestTier', message: 'tier3' },
    ]);
  });

  it.each(['tier1', 'tier2'] as const)('answers 403 FEATURE_NOT_IN_PLAN on %s, paid', async (tier) => {
    const owner = await createUser();
    await putOnPlan(owner, tier, { card: true });
    expectError(await report(owner), 403, 'FEATURE_NOT_IN_PLAN', ['feature', 'lowestTier']);
  });

  it.each(['tier3', 'tier4', 'tier7'] as const)('answers the report on %s', async (tier) => {
    const owner = await createUser();
    await putOnPlan(owner, tier, { card: true, cadence: 'annual' });
    expect(expectData(await report(owner))).toHaveProperty('grandTotalChargedCents');
  });

  it('follows payment: tier3 selected and never paid gives reports for its days to pay, then not', async () => {
    testClock.freeze();
    let owner = await createUser();
    await putOnPlan(owner, 'tier3');
    expectData(await report(owner));
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    expectError(await report(owner), 403, 'FEATURE_NOT_IN_PLAN');
  });

  it('a legacy subscription keeps billing reports', async () => {
    const owner = await createUser();
    await db().update(organizations).set({ billingMode: 'legacy' }).where(eq(organizations.id, owner.organizationId));
    expectData(await report(owner));
  });

  it('the reconciliation and case statements stay open on every plan: statements of what was charged', async () => {
    const owner = await createUser();
    expectData(await invoke(routes.getReconciliation, as(owner)));
    await putOnPlan(owner, 'tier1', { card: true });
    expectData(await invoke(routes.getReconciliation, as(owner)));
  });
});
