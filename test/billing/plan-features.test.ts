import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { DELINQUENCY_DAYS } from '../../lib/billing/summary';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { organizations } from '../../lib/db/schema';
import { createUser, type TestUser, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { grantCredits } from '../../lib/billing/admin';
import { as, ledgerOf, putOnPlan, rowsOfCase, urls } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';
import { organizationRow } from '../harness/organizations';

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

describe('credits (tier4 and above): granted credits pay charges; money owed pays on every plan', () => {
  const upgrade = async (owner: TestUser) => {
    const target = await caseWithAccess(owner.organizationId, owner);
    expectData(await invoke(routes.upgradeCaseToPro, { ...as(owner), path: { caseId: target.id } }));
    const [row] = await rowsOfCase(target.id);
    return row!;
  };
  const balance = async (owner: TestUser) => (await organizationRow(owner.organizationId)).creditBalanceCents;

  it('on tier1 granted credits pay nothing and are kept; on tier4 they pay', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier1', { card: true });
    await grantCredits(owner.organizationId, 20_000, 'Prepaid');
    expect((await upgrade(owner)).creditsAppliedCents).toBe(0);
    expect(await balance(owner)).toBe(20_000);
    // GET /billing/credits stays readable: the balance is the organization's, whatever the plan.
    expect(expectData(await invoke(routes.getCredits, as(owner))).balanceCents).toBe(20_000);

    // The card on file pays what the credits do not.
    expectData(await invoke(routes.selectPlan, { ...as(owner), body: { tier: 'tier4', ...urls } }));
    const balanceAfterFee = await balance(owner);
    expect(balanceAfterFee).toBeLessThan(20_000); // the tier4 fee, for a tier with credits, drew them
    const paid = await upgrade(owner);
    expect(paid.creditsAppliedCents).toBe(Math.min(14_900, balanceAfterFee));
  });

  it('a downgrade from a paid tier5 to tier1 keeps its unused fee as credit, which pays on tier1', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier5', { card: true, cadence: 'annual' });
    await grantCredits(owner.organizationId, 1_000, 'Goodwill');
    const selected = expectData(
      await invoke(routes.selectPlan, { ...as(owner), body: { tier: 'tier1', cadence: 'annual', ...urls } }),
    );
    expect(selected.prorationCents).toBeLessThan(0);
    const owed = await balance(owner);
    expect(owed).toBeGreaterThan(1_000 + 14_900);
    // The Pro upgrade on tier1 is paid from the money owed, in full.
    expect((await upgrade(owner)).creditsAppliedCents).toBe(14_900);
    expect(await balance(owner)).toBe(owed - 14_900);
    const ledger = await ledgerOf(owner.organizationId);
    expect(ledger.map((entry) => entry.kind)).toEqual(expect.arrayContaining(['grant', 'proration', 'charge']));
  });

  it('on tier1 only the owed part is drawn; the granted part waits', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true, cadence: 'annual' });
    await grantCredits(owner.organizationId, 50_000, 'Prepaid');
    expectData(await invoke(routes.selectPlan, { ...as(owner), body: { tier: 'tier1', cadence: 'annual', ...urls } }));
    const entries = await ledgerOf(owner.organizationId);
    const owed = entries.filter((e) => e.kind === 'proration').reduce((sum, e) => sum + e.amountCents, 0);
    const drawnByFee = -entries.filter((e) => e.kind === 'charge').reduce((sum, e) => sum + e.amountCents, 0);
    expect(owed).toBeGreaterThan(0);
    const owedLeft = Math.max(0, owed - drawnByFee);
    expect((await upgrade(owner)).creditsAppliedCents).toBe(Math.min(14_900, owedLeft));
    expect(await balance(owner)).toBeGreaterThanOrEqual(50_000 - drawnByFee);
  });
});
