import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { billingRows } from '../db/schema/billing';
import type { AfterCommit } from '../db/transaction';
import type { OrganizationRow } from '../organizations/load';
import { BILLING_ROW_STATUS, isUnpaid, UNPAID_STATUSES } from './billing-row-lifecycle';
import { closeVoidedInvoice } from './close-voided-invoice';
import { whenPaymentsConfigured } from './processor';
import type { ChargeLine } from './record-charge';
import { basePriceCents, type Cadence, type TierKey } from './tiers';

type BillingRow = typeof billingRows.$inferSelect;

/**
 * Settles the base fee of the period being left, under the organization's lock, and returns the
 * lines the new charge carries for it. Proration never turns money not received into credit:
 *
 * - paid: the unused part of the period is credited (a negative line);
 * - unpaid (open, failed, or not invoiced yet): its rows are voided, its invoice is voided at the
 *   processor after commit (`closeVoidedInvoice`: money it took first is kept as credit), and the
 *   used part of the period is billed again in the new charge, less what was already received
 *   toward it (credits drawn, and credit lines it carried from the period before);
 * - waived, voided or missing: nothing was received and nothing is owed: no line.
 *
 * `outstanding` says whether the lines re-bill an unpaid fee (the delinquency clock keeps running).
 */
export async function settleCurrentBaseFee(
  tx: Tx,
  afterCommit: AfterCommit,
  organization: OrganizationRow,
  from: { tier: TierKey; cadence: Cadence },
  at: Date,
): Promise<Proration> {
  const rows: BillingRow[] = organization.baseFeeChargeKey
    ? await tx
        .select()
        .from(billingRows)
        .where(eq(billingRows.chargeKey, organization.baseFeeChargeKey))
        .orderBy(asc(billingRows.idempotencyKey))
    : [];
  const fee = rows[0];
  const unpaid = fee !== undefined && isUnpaid(fee.status);
  if (unpaid) {
    await tx
      .update(billingRows)
      .set({ status: BILLING_ROW_STATUS.voided })
      .where(
        and(eq(billingRows.chargeKey, organization.baseFeeChargeKey!), inArray(billingRows.status, UNPAID_STATUSES)),
      );
    if (fee.invoiceId) {
      const invoiceId = fee.invoiceId;
      afterCommit(() => whenPaymentsConfigured(() => closeVoidedInvoice(invoiceId)));
    }
  }
  return computeProration({
    from,
    period: { start: organization.billingPeriodStart, end: organization.billingPeriodEnd },
    at,
    fee:
      fee?.status === BILLING_ROW_STATUS.paid
        ? { status: 'paid' }
        : unpaid
          ? {
              status: 'unpaid',
              invoiceId: fee.invoiceId,
              receivedCents: rows.reduce(
                (sum, row) => sum + row.creditsAppliedCents + (row.amountCents < 0 ? -row.amountCents : 0),
                0,
              ),
            }
          : null,
  });
}

/** The lines that settle the current base fee on a change, and whether they re-bill an unpaid fee. */
export interface Proration {
  lines: ChargeLine[];
  outstanding: boolean;
}

/**
 * The settlement of `settleCurrentBaseFee` without the database: the fee of `from` over its
 * period, split at `at` into a used and an unused part (floored to the cent). A paid fee credits
 * the unused part; an unpaid one (`receivedCents` already received toward it) bills the used
 * part again and credits what was received; no fee (waived, voided, missing) gives no line.
 */
export function computeProration(input: {
  from: { tier: TierKey; cadence: Cadence };
  period: { start: Date | null; end: Date | null };
  at: Date;
  fee: { status: 'paid' } | { status: 'unpaid'; invoiceId: string | null; receivedCents: number } | null;
}): Proration {
  const { from, at, fee } = input;
  const { start, end } = input.period;
  const oldFee = basePriceCents(from.tier, from.cadence);
  const unused =
    start && end && end > at
      ? Math.floor((oldFee * (end.getTime() - at.getTime())) / (end.getTime() - start.getTime()))
      : 0;
  const label = `${from.tier} ${from.cadence}`;
  const credit = (amount: number, description: string): ChargeLine[] =>
    amount > 0
      ? [{ caseId: null, skuKey: 'platform_base_fee_proration', description, quantity: 1, unitAmountCents: -amount }]
      : [];

  if (fee?.status === 'paid')
    return { lines: credit(unused, `Unused part of the ${label} base fee`), outstanding: false };
  if (!fee) return { lines: [], outstanding: false };

  const used = oldFee - unused;
  const voidedNote = fee.invoiceId ? `, invoice ${fee.invoiceId} voided` : '';
  return {
    lines: [
      ...(used > 0
        ? [
            {
              caseId: null,
              skuKey: 'platform_base_fee_used',
              description: `Used part of the unpaid ${label} base fee${voidedNote}`,
              quantity: 1,
              unitAmountCents: used,
            },
          ]
        : []),
      ...credit(fee.receivedCents, `Already paid toward the voided ${label} base fee`),
    ],
    outstanding: true,
  };
}
