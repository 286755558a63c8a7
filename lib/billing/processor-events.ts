import { recordAudit } from '../audit/record';
import { SYSTEM_ACTOR, SYSTEM_SCOPE, withAuditScope } from '../audit/scope';
import type { Tx } from '../db/client';
import type { SettlementOutcome } from './billing-row-lifecycle';

/**
 * What the payment processor told us: a webhook event (its type and id), or its answer to one of
 * our calls (typed like the event it stands for, with no event id).
 */
export interface ProcessorReport {
  type: string;
  processorEventId: string | null;
}

/** The processor's answer about an invoice, typed like the webhook event it stands for. */
export const invoiceOutcomeReport = (outcome: SettlementOutcome): ProcessorReport => ({
  type: outcome === 'paid' ? 'invoice.paid' : 'invoice.payment_failed',
  processorEventId: null,
});

/**
 * The audit event of a change the processor reported, made by the system. A webhook event carries
 * the request that delivered it; the processor's answer to a call made after a commit is not part
 * of the request that happened to make it (that request records its own event), so it carries none.
 */
export function recordProcessorEvent(
  tx: Tx,
  organizationId: string,
  report: ProcessorReport,
  target: { type: string; id: string } | null,
  metadata: Record<string, unknown> = {},
): void {
  const record = () =>
    recordAudit(tx, {
      action: 'billing.processor_event.received',
      organizationId,
      target,
      metadata: { type: report.type, processorEventId: report.processorEventId, ...metadata },
      actor: SYSTEM_ACTOR,
    });
  if (report.processorEventId) record();
  else withAuditScope(SYSTEM_SCOPE, record);
}
