import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { billingRows, caseAccess, organizations } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import { createCaseRow, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { useStripeDouble } from '../harness/stripe-double';
import { organizationRow } from '../harness/organizations';

/**
 * The payment processor down (issue 15), through the real Stripe SDK against the Stripe double:
 * a request that needs Stripe before its commit answers 503 SERVICE_UNAVAILABLE with Retry-After
 * and changes nothing; a request whose own work committed never fails for it, and maintenance
 * finishes the processor's part once it is back, without a restart.
 */

const double = useStripeDouble();
const urls = { successUrl: 'https://app.example.test/done', cancelUrl: 'https://app.example.test/cancel' };
/** Every call to Stripe fails: connections dropped (the SDK's own retries included). */
const stripeDown = () => double.failNext(/.*/, 1_000, 'drop-before');

function expectUnavailable(answer: Awaited<ReturnType<typeof invoke>>) {
  expectError(answer, 503, 'SERVICE_UNAVAILABLE');
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
}

describe('the payment processor down', () => {
  it('registration still succeeds; the organization gets its customer from maintenance once Stripe is back', async () => {
    stripeDown();
    const owner = await createUser();
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toBeNull();

    double.clearFailures();
    await runMaintenance();
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toMatch(/^cus_/);
  });

  it('selecting a plan without a card (needs a Stripe set-up link now): 503, plan and billing unchanged; works once back', async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    const before = await organizationRow(owner.organizationId);

    stripeDown();
    expectUnavailable(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    const after = await organizationRow(owner.organizationId);
    expect(after).toMatchObject({ billingTier: before.billingTier, billingMode: before.billingMode });
    expect(await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId))).toEqual(
      [],
    );

    double.clearFailures();
    const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    expect(selected).toMatchObject({ tier: 'tier2', paymentRequired: true, setupSessionUrl: expect.any(String) });
  });

  it('the card set-up link: 503 while Stripe is down, the link once it is back', async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    stripeDown();
    expectUnavailable(await invoke(routes.createBillingSetupSession, { ...as, body: urls }));
    double.clearFailures();
    expect(expectData(await invoke(routes.createBillingSetupSession, { ...as, body: urls }))).toMatchObject({
      url: expect.any(String),
    });
  });

  it('a Pro upgrade (charged after its commit) answers 200 processing; maintenance invoices it once Stripe is back', async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    const customerId = (await organizationRow(owner.organizationId)).processorCustomerId!;
    double.attachCard(customerId, { last4: '4242' });
    await db()
      .update(organizations)
      .set({ hasPaymentMethod: true, paymentMethodLast4: '4242' })
      .where(eq(organizations.id, owner.organizationId));
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2' } }));
    const legal = await createCaseRow(owner.organizationId);
    await db().insert(caseAccess).values({ caseId: legal.id, userId: owner.id, access: 'owner' });

    stripeDown();
    expect(expectData(await invoke(routes.upgradeCaseToPro, { ...as, path: { caseId: legal.id } }))).toEqual({
      caseId: legal.id,
      status: 'processing',
    });
    const chargeKey = `case-pro-upgrade:${legal.id}`;
    const [waiting] = await db().select().from(billingRows).where(eq(billingRows.chargeKey, chargeKey));
    expect(waiting).toMatchObject({ status: 'processing', amountCents: 14_900 });

    double.clearFailures();
    testClock.advance(61); // maintenance retries charges stuck for a minute
    await runMaintenance();
    const [settled] = await db().select().from(billingRows).where(eq(billingRows.chargeKey, chargeKey));
    expect(settled).toMatchObject({ status: 'paid', amountCents: 14_900 });
  });
});
