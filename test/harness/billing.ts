import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { routes } from '../../functions/routes';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { type PaymentProcessor, usePaymentProcessor } from '../../lib/billing/processor';
import { SandboxProcessor } from '../../lib/billing/processor/sandbox';
import type { Cadence, TierKey } from '../../lib/billing/tiers';
import { db } from '../../lib/db/client';
import { billingRows, cases, creditLedger, organizations } from '../../lib/db/schema';
import type { TestUser } from './actors';
import { expectData, invoke } from './invoke';

/**
 * Billing helpers of the tests: putting an organization on a plan with or without a card, the
 * sandbox processor misbehaving, billing rows written directly.
 */

export const urls = {
  successUrl: 'https://app.example.test/billing/done',
  cancelUrl: 'https://app.example.test/billing/cancel',
};

/** A card the sandbox accepts, and one it declines (ends 0002). */
export const GOOD_CARD = '4242 4242 4242 4242';
export const DECLINED_CARD = '4000 0000 0000 0002';

/** The request options of `user` acting in `organizationId` (their own organization by default). */
export function as(user: TestUser, organizationId = user.organizationId): { token: string; organization: string } {
  return { token: user.accessToken, organization: organizationId };
}

/** GET /billing/plan/current's data for `user`'s organization. */
export async function current(user: TestUser) {
  return expectData(await invoke(routes.getCurrentPlan, as(user)));
}

/** GET /organization/{orgId}/usages-stat's data for `user`'s organization. */
export async function usageStat(user: TestUser) {
  return expectData(
    await invoke(routes.getOrganizationUsage, { token: user.accessToken, path: { orgId: user.organizationId } }),
  );
}

/** POST /organization/{orgId}/invitations as `user` (the answer, to check). */
export function invite(user: TestUser, emails: string[]) {
  return invoke(routes.inviteUsers, {
    token: user.accessToken,
    path: { orgId: user.organizationId },
    body: { emails },
  });
}

/** The sandbox checkout session id of a set-up link. */
export function sessionIdOf(setupUrl: string): string {
  return new URL(setupUrl).pathname.split('/').at(-1)!;
}

/**
 * Selects a plan through the route as `user` (the owner by default), and with `card` saves a card
 * through the sandbox checkout, which collects the open base fee. Returns the selection answer.
 */
export async function putOnPlan(
  user: TestUser,
  tier: TierKey,
  options: { card?: boolean | string; cadence?: Cadence; organizationId?: string } = {},
) {
  const body = { tier, ...(options.cadence ? { cadence: options.cadence } : {}), ...urls };
  const selected = expectData(await invoke(routes.selectPlan, { ...as(user, options.organizationId), body }));
  if (options.card) {
    expect(selected.setupSessionUrl, 'a card set-up link').toEqual(expect.any(String));
    const card = typeof options.card === 'string' ? options.card : GOOD_CARD;
    expect(await completeSandboxCheckout(sessionIdOf(selected.setupSessionUrl), card)).toEqual({
      successUrl: urls.successUrl,
    });
  }
  return selected;
}

/**
 * The sandbox processor with some calls replaced (a failing, held back or recording one), for the
 * tests that need the processor to misbehave; install it with usePaymentProcessor.
 */
export function sandboxProcessorWith(overrides: Partial<Omit<PaymentProcessor, 'name'>>): PaymentProcessor {
  const sandbox = new SandboxProcessor();
  return {
    name: 'sandbox',
    createCustomer: (input) => sandbox.createCustomer(input),
    createSetupSession: (input) => sandbox.createSetupSession(input),
    chargeInvoice: (input) => sandbox.chargeInvoice(input),
    payInvoice: (id) => sandbox.payInvoice(id),
    voidInvoice: (id) => sandbox.voidInvoice(id),
    ...overrides,
  };
}

/**
 * From now on every charge the sandbox is asked to collect is declined, as by a card that stopped
 * paying; the test's afterEach puts the plain sandbox back (usePaymentProcessor(undefined)).
 */
export function declineEveryCharge(): void {
  usePaymentProcessor(
    sandboxProcessorWith({
      chargeInvoice: async (input) => ({
        invoiceId: `in_declined_${input.idempotencyKey}`,
        hostedInvoiceUrl: null,
        status: 'failed',
      }),
    }),
  );
}

/** Saves a card the sandbox accepts through the checkout page of a set-up link (collects what is open). */
export async function completeCheckoutOf(setupUrl: string, card = GOOD_CARD): Promise<void> {
  expect(await completeSandboxCheckout(sessionIdOf(setupUrl), card)).toEqual({ successUrl: urls.successUrl });
}

export async function caseRow(caseId: string) {
  const [row] = await db().select().from(cases).where(eq(cases.id, caseId));
  return row!;
}

export async function rowsOfOrganization(organizationId: string) {
  return db().select().from(billingRows).where(eq(billingRows.organizationId, organizationId));
}

export async function rowsOfCase(caseId: string) {
  return db().select().from(billingRows).where(eq(billingRows.caseId, caseId));
}

export async function ledgerOf(organizationId: string) {
  return db().select().from(creditLedger).where(eq(creditLedger.organizationId, organizationId));
}

export type RowStatus = (typeof billingRows.$inferInsert)['status'];

export interface SeedRow {
  caseId?: string | null;
  amountCents: number;
  status?: RowStatus;
  informational?: boolean;
  skuKey?: string;
  createdAt?: Date;
  invoiceId?: string | null;
  hostedInvoiceUrl?: string | null;
  description?: string;
}

/** Billing rows written directly (statuses no sandbox flow reaches: waived, voided, refunded...). */
export async function insertRows(organizationId: string, rows: SeedRow[]) {
  if (rows.length === 0) return [];
  return db()
    .insert(billingRows)
    .values(
      rows.map((row) => {
        const key = `seed:${randomBytes(8).toString('hex')}`;
        return {
          organizationId,
          caseId: row.caseId ?? null,
          skuKey: row.skuKey ?? (row.caseId ? 'case_pro_upgrade' : 'platform_base_fee_tier2_monthly'),
          description: row.description ?? `Seeded ${row.status ?? 'paid'} ${row.amountCents}`,
          quantity: 1,
          unitAmountCents: row.amountCents,
          amountCents: row.amountCents,
          status: row.status ?? 'paid',
          informational: row.informational ?? row.status === 'plan_included',
          invoiceId: row.invoiceId ?? null,
          hostedInvoiceUrl: row.hostedInvoiceUrl ?? null,
          idempotencyKey: `${key}:0`,
          chargeKey: key,
          ...(row.createdAt ? { createdAt: row.createdAt, updatedAt: row.createdAt } : {}),
        };
      }),
    )
    .returning();
}

/** `count` instants one second apart ending `endingAt` (oldest first), for rows in a known order. */
export function secondsApart(count: number, endingAt = new Date()): Date[] {
  return Array.from({ length: count }, (_, index) => new Date(endingAt.getTime() - (count - 1 - index) * 1000));
}

/**
 * Puts the organization on `tier` directly in its row, paid and with no billing row, period or
 * charge: for the tests of what reports and statements hold, which a base fee row would change.
 * The plan row keeps its caps; the tier's features apply (lib/billing/enforced-plan.ts).
 */
export async function onTierWithoutCharges(organizationId: string, tier: TierKey): Promise<void> {
  await db()
    .update(organizations)
    .set({ billingMode: 'pay_as_you_go', billingTier: tier, billingCadence: 'monthly', baseFeeFailedAt: null })
    .where(eq(organizations.id, organizationId));
}
