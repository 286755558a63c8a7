import { and, asc, eq, inArray, isNull, lt } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { transaction } from '../db/transaction';
import { logger } from '../log';
import { BILLING_ROW_STATUS } from './billing-row-lifecycle';
import { closeVoidedInvoice } from './close-voided-invoice';
import { ensureProcessorCustomer } from './customers';
import { paymentProcessor, paymentsConfigured } from './processor';
import { settleInvoice } from './settle-invoice';

/**
 * Invoices the unpaid part of a charge at the processor (after commit). Safe to repeat: the
 * processor call carries the charge's idempotency key, so a retry after a lost answer finds the
 * same invoice instead of charging twice. On failure the rows stay `processing` and the
 * maintenance job retries.
 */
export async function invoiceCharge(chargeKey: string): Promise<void> {
  const rows = await db()
    .select()
    .from(billingRows)
    .where(eq(billingRows.chargeKey, chargeKey))
    .orderBy(asc(billingRows.idempotencyKey));
  const open = rows.filter((row) => row.status === BILLING_ROW_STATUS.processing && row.invoiceId === null);
  if (open.length === 0) return;
  const organizationId = open[0]!.organizationId;
  const customerId = await ensureProcessorCustomer(organizationId);
  if (!customerId) throw new Error(`Organization ${organizationId} has no processor customer`);
  const lines = open.map((row) => ({
    description: row.description,
    amountCents: row.amountCents - row.creditsAppliedCents,
  }));
  const processor = await paymentProcessor();
  const result = await processor.chargeInvoice({
    customerId,
    lines,
    idempotencyKey: `charge:${chargeKey}`,
    metadata: { chargeKey, organizationId },
  });
  const voidedMeanwhile = await transaction(async (tx) => {
    const invoiced = await tx
      .update(billingRows)
      .set({
        invoiceId: result.invoiceId,
        hostedInvoiceUrl: result.hostedInvoiceUrl,
        status: BILLING_ROW_STATUS.invoiced,
      })
      .where(
        and(
          inArray(
            billingRows.id,
            open.map((r) => r.id),
          ),
          eq(billingRows.status, BILLING_ROW_STATUS.processing),
        ),
      )
      .returning({ id: billingRows.id });
    if (invoiced.length > 0) {
      if (result.status !== 'open') await settleInvoice(tx, result.invoiceId, result.status);
      return false;
    }
    // A plan change voided the charge while its invoice was being made: the rows keep the invoice
    // id, so it is voided at the processor like any other (money it took is kept as credit).
    const voided = await tx
      .update(billingRows)
      .set({ invoiceId: result.invoiceId, hostedInvoiceUrl: result.hostedInvoiceUrl })
      .where(
        and(
          inArray(
            billingRows.id,
            open.map((r) => r.id),
          ),
          eq(billingRows.status, BILLING_ROW_STATUS.voided),
          isNull(billingRows.invoiceId),
        ),
      )
      .returning({ id: billingRows.id });
    return voided.length > 0;
  });
  if (voidedMeanwhile) await closeVoidedInvoice(result.invoiceId);
}

/** Maintenance: charges whose invoicing failed or never ran are invoiced again (same idempotency key). */
export async function retryStuckCharges(olderThanSeconds = 60, limit = 50): Promise<number> {
  if (!(await paymentsConfigured())) return 0;
  const stuck = await db()
    .selectDistinct({ chargeKey: billingRows.chargeKey })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.status, BILLING_ROW_STATUS.processing),
        isNull(billingRows.invoiceId),
        lt(billingRows.createdAt, addSeconds(now(), -olderThanSeconds)),
      ),
    )
    .limit(limit);
  let retried = 0;
  for (const { chargeKey } of stuck) {
    try {
      await invoiceCharge(chargeKey);
      retried += 1;
    } catch (error) {
      logger.warn('charge retry failed', { chargeKey, error });
    }
  }
  return retried;
}
