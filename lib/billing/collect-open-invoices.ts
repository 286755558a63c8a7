import { and, eq, inArray } from 'drizzle-orm';
import { now } from '../clock';
import { db } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { transaction } from '../db/transaction';
import { COLLECTABLE_STATUSES, type SettlementOutcome } from './billing-row-lifecycle';
import { paymentProcessor } from './processor';
import { settleInvoice } from './settle-invoice';

/** After a card is attached: try again to collect the organization's open invoices. */
export async function collectOpenInvoices(organizationId: string): Promise<void> {
  const open = await db()
    .selectDistinct({ invoiceId: billingRows.invoiceId })
    .from(billingRows)
    .where(and(eq(billingRows.organizationId, organizationId), inArray(billingRows.status, [...COLLECTABLE_STATUSES])));
  const processor = await paymentProcessor();
  for (const { invoiceId } of open) {
    if (!invoiceId) continue;
    const result = await processor.payInvoice(invoiceId, `pay:${invoiceId}:${now().getTime()}`);
    if (result.status !== 'open')
      await transaction((tx) => settleInvoice(tx, invoiceId, result.status as SettlementOutcome));
  }
}
