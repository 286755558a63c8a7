import { and, eq, inArray } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { billingHistory, billingRows } from '../db/schema/billing';
import { makeCasesProPaid } from '../cases/pro-status';
import { recordBaseFeeOutcome } from '../organizations/billing-account';
import { BILLING_ROW_STATUS, type SettlementOutcome, statusesThatMayBecome } from './billing-row-lifecycle';
import { alignPlanPro } from './case-pro';
import { invoiceOutcomeReport, type ProcessorReport, recordProcessorEvent } from './processor-events';
import { PRO_UPGRADE_SKU } from './tiers';

/**
 * Marks every row of an invoice paid or failed (webhook or sandbox settlement); a repeat changes
 * nothing. A settlement records the processor's report (by default its answer to our call) as
 * the audit event of the change. Returns the number of rows settled.
 */
export async function settleInvoice(
  tx: Tx,
  invoiceId: string,
  outcome: SettlementOutcome,
  report: ProcessorReport = invoiceOutcomeReport(outcome),
): Promise<number> {
  const rows = await tx
    .select({ id: billingRows.id, organizationId: billingRows.organizationId })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.invoiceId, invoiceId),
        // paid: processing, INVOICED or failed; failed: processing or INVOICED.
        inArray(billingRows.status, statusesThatMayBecome(outcome)),
      ),
    );
  if (rows.length === 0) return 0;
  await settleRows(
    tx,
    rows.map((r) => r.id),
    outcome,
  );
  // An invoice belongs to one organization.
  recordProcessorEvent(
    tx,
    rows[0]!.organizationId,
    report,
    { type: 'invoice', id: invoiceId },
    { invoiceId, outcome, rowsSettled: rows.length },
  );
  return rows.length;
}

/** Sets the outcome on rows and applies what it means: Pro cases, delinquency of a failed base fee. */
export async function settleRows(tx: Tx, rowIds: string[], outcome: SettlementOutcome): Promise<void> {
  const rows = await tx.update(billingRows).set({ status: outcome }).where(inArray(billingRows.id, rowIds)).returning();
  const proCases = rows.filter((r) => r.skuKey === PRO_UPGRADE_SKU.key && r.caseId).map((r) => r.caseId!);
  const baseFees = rows.filter((r) => r.skuKey.startsWith('platform_base_fee') && r.amountCents > 0);
  if (outcome === BILLING_ROW_STATUS.paid && proCases.length > 0) await makeCasesProPaid(tx, proCases);
  for (const row of baseFees) await recordBaseFeeOutcome(tx, row.organizationId, outcome);
  // Pro through a Pro-including plan follows its fee: lasting once paid, ending with its days to pay once failed.
  for (const organizationId of new Set(baseFees.map((row) => row.organizationId)))
    await alignPlanPro(tx, organizationId, outcome === BILLING_ROW_STATUS.paid ? 'base_fee_paid' : 'base_fee_failed');
  const organizationIds = [...new Set(rows.map((r) => r.organizationId))];
  for (const organizationId of organizationIds) {
    const own = rows.filter((r) => r.organizationId === organizationId);
    await tx.insert(billingHistory).values({
      organizationId,
      category: 'invoicing',
      caseId: own.find((r) => r.caseId)?.caseId ?? null,
      description: `${own.length} billing row(s) ${outcome === BILLING_ROW_STATUS.paid ? 'paid' : 'failed to collect'}${own[0]?.invoiceId ? ` (invoice ${own[0].invoiceId})` : ''}`,
    });
  }
}
