import { and, eq, isNull, sql } from 'drizzle-orm';
import { now } from '../clock';
import type { Executor, Tx } from '../db/client';
import { organizations } from '../db/schema/organizations';

/**
 * The billing fields of an organization (credit balance, plan selected, base fee standing,
 * processor customer, card on file) and its plan's caps, written only here: lib/billing decides
 * and calls these, so the organizations table keeps one writing domain.
 */

/** The credit balance after a change; the caller holds the row lock and writes the ledger entry. */
export async function setCreditBalance(tx: Executor, organizationId: string, balanceCents: number): Promise<void> {
  await tx.update(organizations).set({ creditBalanceCents: balanceCents }).where(eq(organizations.id, organizationId));
}

/**
 * A base fee was paid or failed to collect: a failure starts the delinquency clock (keeping the
 * time of an earlier failure), a payment stops it.
 */
export async function recordBaseFeeOutcome(tx: Tx, organizationId: string, outcome: 'paid' | 'failed'): Promise<void> {
  await tx
    .update(organizations)
    .set({
      baseFeeFailedAt:
        outcome === 'failed'
          ? sql`coalesce(${organizations.baseFeeFailedAt}, ${sql.param(now(), organizations.baseFeeFailedAt)})`
          : null,
    })
    .where(eq(organizations.id, organizationId));
}

/** The plan an organization selected, its period, its base fee's charge and the delinquency clock. */
export interface SelectedPlan {
  billingMode: 'pay_as_you_go';
  billingTier: string;
  billingCadence: 'monthly' | 'annual';
  billingPeriodStart: Date;
  billingPeriodEnd: Date;
  baseFeeChargeKey: string;
  baseFeeFailedAt: Date | null;
}

/** Records the plan selected (the caller holds the organization row's lock). */
export async function setSelectedPlan(tx: Tx, organizationId: string, plan: SelectedPlan): Promise<void> {
  await tx
    .update(organizations)
    .set({
      billingMode: plan.billingMode,
      billingTier: plan.billingTier,
      billingCadence: plan.billingCadence,
      billingPeriodStart: plan.billingPeriodStart,
      billingPeriodEnd: plan.billingPeriodEnd,
      baseFeeChargeKey: plan.baseFeeChargeKey,
      baseFeeFailedAt: plan.baseFeeFailedAt,
    })
    .where(eq(organizations.id, organizationId));
}

/** The organization's customer at the payment processor, unless one was set meanwhile. */
export async function setProcessorCustomerId(
  executor: Executor,
  organizationId: string,
  customerId: string,
): Promise<void> {
  await executor
    .update(organizations)
    .set({ processorCustomerId: customerId })
    .where(and(eq(organizations.id, organizationId), isNull(organizations.processorCustomerId)));
}

/** A card is on file; `last4` as the processor reported it. */
export async function setPaymentMethod(tx: Tx, organizationId: string, last4: string | null): Promise<void> {
  await tx
    .update(organizations)
    .set({ hasPaymentMethod: true, paymentMethodLast4: last4 })
    .where(eq(organizations.id, organizationId));
}
