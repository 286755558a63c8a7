import { and, eq, isNotNull, isNull, lt } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { transaction } from '../db/transaction';
import { logger } from '../log';
import * as businessMetrics from '../observability/metrics';
import { keepPaymentAsCredit } from './adjust-credits';
import { BILLING_ROW_STATUS } from './billing-row-lifecycle';
import { invoiceOutcomeReport, recordProcessorEvent } from './processor-events';
import { paymentProcessor, paymentsConfigured } from './processor';

/**
 * The rows of `invoiceId` were voided (a plan change replaced an unpaid base fee): void the
 * invoice at the processor so it can never be collected. If it was paid first, the payment is
 * kept as credit. Either way the rows are marked closed; until then maintenance retries.
 */
export async function closeVoidedInvoice(invoiceId: string): Promise<void> {
  const rows = await db()
    .select()
    .from(billingRows)
    .where(
      and(
        eq(billingRows.invoiceId, invoiceId),
        eq(billingRows.status, BILLING_ROW_STATUS.voided),
        isNull(billingRows.invoiceClosedAt),
      ),
    );
  if (rows.length === 0) return;
  const processor = await paymentProcessor();
  const outcome = await processor.voidInvoice(invoiceId, `void:${invoiceId}`);
  await transaction(async (tx, afterCommit) => {
    if (outcome === BILLING_ROW_STATUS.paid) {
      const organizationId = rows[0]!.organizationId;
      const paidCents = rows.reduce((sum, row) => sum + row.amountCents - row.creditsAppliedCents, 0);
      const creditedCents = await keepPaymentAsCredit(tx, organizationId, invoiceId, paidCents);
      afterCommit(async () => businessMetrics.creditsAdded(creditedCents));
      // The processor answered that the invoice was paid before it could be voided: money in.
      if (creditedCents > 0)
        recordProcessorEvent(
          tx,
          organizationId,
          invoiceOutcomeReport(BILLING_ROW_STATUS.paid),
          { type: 'invoice', id: invoiceId },
          { invoiceId, keptAsCreditCents: creditedCents },
        );
    }
    await tx
      .update(billingRows)
      .set({ invoiceClosedAt: now() })
      .where(and(eq(billingRows.invoiceId, invoiceId), eq(billingRows.status, BILLING_ROW_STATUS.voided)));
  });
}

/** Maintenance: invoices of voided rows that the processor has not confirmed void yet. */
export async function retryVoidedInvoices(olderThanSeconds = 60, limit = 50): Promise<number> {
  if (!(await paymentsConfigured())) return 0;
  const pending = await db()
    .selectDistinct({ invoiceId: billingRows.invoiceId })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.status, BILLING_ROW_STATUS.voided),
        isNotNull(billingRows.invoiceId),
        isNull(billingRows.invoiceClosedAt),
        lt(billingRows.updatedAt, addSeconds(now(), -olderThanSeconds)),
      ),
    )
    .limit(limit);
  let closed = 0;
  for (const { invoiceId } of pending) {
    try {
      await closeVoidedInvoice(invoiceId!);
      closed += 1;
    } catch (error) {
      logger.warn('voiding an invoice failed', { invoiceId, error });
    }
  }
  return closed;
}
