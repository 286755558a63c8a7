import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { testClock } from '../../lib/clock';
import { publicBaseUrl } from '../../lib/config';
import { db } from '../../lib/db/client';
import { billingHistory, organizations, sandboxCheckoutSessions } from '../../lib/db/schema';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, putOnPlan, rowsOfOrganization, sessionIdOf, urls } from '../harness/billing';
import { organizationRow } from '../harness/organizations';
import { describeSecurity } from '../harness/security';

const setupSession = (user: TestUser, body: unknown = urls) =>
  invoke(routes.createBillingSetupSession, { ...as(user), body });

async function sessionsOf(customerId: string) {
  return db().select().from(sandboxCheckoutSessions).where(eq(sandboxCheckoutSessions.customerId, customerId));
}

/** An owner whose organization is on tier2 without a card (its base fee is open). */
async function ownerOnPlan() {
  const owner = await createUser();
  await putOnPlan(owner, 'tier2');
  return { owner };
}

describe('POST /billing/setup-session', () => {
  describeSecurity(routes.createBillingSetupSession, {
    request: () => ({ body: urls }),
    setup: async (owner) => {
      await putOnPlan(owner, 'tier2');
    },
    succeeds: true,
  });

  it('answers a checkout link in setup mode for the organization customer; completing it saves the card and collects the open fee', async () => {
    const { owner } = await ownerOnPlan();
    const { processorCustomerId } = await organizationRow(owner.organizationId);
    const custom = {
      successUrl: 'https://app.example.test/settings/billing?saved=1',
      cancelUrl: 'https://app.example.test/settings/billing',
    };

    const data = expectData(await setupSession(owner, custom));

    expect(data).toEqual({
      url: expect.stringMatching(new RegExp(`^${publicBaseUrl()}/_sandbox/checkout/cs_sandbox_[0-9a-f]+$`)),
    });
    const session = (await sessionsOf(processorCustomerId!)).find((s) => s.id === sessionIdOf(data.url));
    expect(session).toMatchObject({
      customerId: processorCustomerId,
      successUrl: custom.successUrl,
      cancelUrl: custom.cancelUrl,
      status: 'open',
    });
    // Setting up a card charges nothing by itself.
    expect((await rowsOfOrganization(owner.organizationId)).map((r) => r.status)).toEqual(['INVOICED']);

    expect(await completeSandboxCheckout(sessionIdOf(data.url), '4242 4242 4242 4242')).toEqual({
      successUrl: custom.successUrl,
    });

    const organization = await organizationRow(owner.organizationId);
    expect(organization).toMatchObject({ hasPaymentMethod: true, paymentMethodLast4: '4242' });
    expect((await rowsOfOrganization(owner.organizationId)).map((r) => r.status)).toEqual(['paid']);
    const history = await db()
      .select()
      .from(billingHistory)
      .where(
        and(eq(billingHistory.organizationId, owner.organizationId), eq(billingHistory.category, 'payment_method')),
      );
    expect(history.map((h) => h.description)).toEqual(['Card ending 4242 saved for payments']);
  });

  it('reuses the session for a repeat within the same minute and opens a new one later', async () => {
    const { owner } = await ownerOnPlan();
    testClock.freeze(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 5_000));

    const first = expectData(await setupSession(owner));
    const again = expectData(await setupSession(owner));
    testClock.advance(60);
    const later = expectData(await setupSession(owner));

    expect(again.url).toBe(first.url);
    expect(later.url).not.toBe(first.url);
  });

  it('gives a repeat with other return URLs within the same minute its own session, returning to them', async () => {
    const { owner } = await ownerOnPlan();
    const other = {
      successUrl: 'https://app.example.test/other/done',
      cancelUrl: 'https://app.example.test/other/cancel',
    };

    const first = expectData(await setupSession(owner, urls));
    const second = expectData(await setupSession(owner, other));

    expect(second.url).not.toBe(first.url);
    const [session] = await db()
      .select()
      .from(sandboxCheckoutSessions)
      .where(eq(sandboxCheckoutSessions.id, sessionIdOf(second.url)));
    expect(session).toMatchObject({ successUrl: other.successUrl, cancelUrl: other.cancelUrl });
    expect(await completeSandboxCheckout(sessionIdOf(second.url), '4242424242424242')).toEqual({
      successUrl: other.successUrl,
    });
  });

  it('answers 409 CONFLICT while the billing profile has no processor customer, and opens no session', async () => {
    const { owner } = await ownerOnPlan();
    const { processorCustomerId } = await organizationRow(owner.organizationId);
    const sessionsBefore = (await sessionsOf(processorCustomerId!)).length;
    await db()
      .update(organizations)
      .set({ processorCustomerId: null })
      .where(eq(organizations.id, owner.organizationId));

    const result = await setupSession(owner);

    expectError(result, 409, 'CONFLICT');
    expect(result.body.data).toBeUndefined();
    expect(await sessionsOf(processorCustomerId!)).toHaveLength(sessionsBefore);
  });

  it.each([
    ['free', undefined],
    ['legacy', 'legacy'],
  ] as const)('answers 403 FEATURE_DISABLED for an organization not on case billing (%s)', async (_label, mode) => {
    const owner = await createUser();
    if (mode)
      await db().update(organizations).set({ billingMode: mode }).where(eq(organizations.id, owner.organizationId));
    const { processorCustomerId } = await organizationRow(owner.organizationId);

    expectError(await setupSession(owner), 403, 'FEATURE_DISABLED');

    expect(await sessionsOf(processorCustomerId!)).toEqual([]);
  });

  it.each([
    ['a missing successUrl', { cancelUrl: urls.cancelUrl }, 'body.successUrl'],
    ['a missing cancelUrl', { successUrl: urls.successUrl }, 'body.cancelUrl'],
    ['a successUrl that is not a URL', { ...urls, successUrl: 'done' }, 'body.successUrl'],
    ['a cancelUrl that is not a URL', { ...urls, cancelUrl: 42 }, 'body.cancelUrl'],
    [
      'a successUrl over 2048 characters',
      { ...urls, successUrl: `https://app.example.test/${'a'.repeat(2048)}` },
      'body.successUrl',
    ],
    ['a javascript: successUrl', { ...urls, successUrl: 'javascript:alert(1)' }, 'body.successUrl'],
    ['a data: cancelUrl', { ...urls, cancelUrl: 'data:text/html,<script>alert(1)</script>' }, 'body.cancelUrl'],
    ['an ftp: successUrl', { ...urls, successUrl: 'ftp://app.example.test/done' }, 'body.successUrl'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body, field) => {
    const { owner } = await ownerOnPlan();

    expectError(await setupSession(owner, body), 400, 'VALIDATION_FAILED', [field]);
  });

  it('ignores a field it does not know: mode payment still opens a set-up session that charges nothing', async () => {
    const { owner } = await ownerOnPlan();

    const data = expectData(await setupSession(owner, { ...urls, mode: 'payment', amountCents: 100 }));

    expect(data.url).toMatch(/\/_sandbox\/checkout\/cs_sandbox_/);
    expect((await rowsOfOrganization(owner.organizationId)).map((r) => r.status)).toEqual(['INVOICED']);
  });

  it('answers 400 VALIDATION_FAILED without a body', async () => {
    const { owner } = await ownerOnPlan();

    expectError(await invoke(routes.createBillingSetupSession, as(owner)), 400, 'VALIDATION_FAILED');
  });
});
