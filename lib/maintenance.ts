import { retryStuckCharges, retryVoidedInvoices } from './billing/charges';
import { endLapsedPlanPro } from './billing/case-pro';
import { createMissingProcessorCustomers } from './billing/customers';
import { pruneIdempotencyKeys } from './idempotency';
import { logger } from './log';
import { deliverDueEmails } from './mail/outbox';
import { requeueStalledImports } from './material/imports/queue';
import { removeLapsedUploads } from './material/lapsed-uploads';
import { pruneRateLimitCounters } from './rate-limit';
import { removeExpiredDocuments } from './storage/generated-documents';

/**
 * Periodic upkeep: retry due emails from the outbox, drop old rate-limit windows and idempotency
 * answers past their 24 hours, and create the
 * payment-processor customers and invoices that could not be created (or voided) at the time,
 * send stalled evidence imports to the worker again, and remove uploads never started (their
 * objects, then their reservations) and generated documents past their expiry, and end the Pro of
 * cases whose plan no longer includes it. The local
 * server runs it on a timer; in the cloud a scheduled function runs the same call.
 */
export async function runMaintenance(): Promise<{
  emailsSent: number;
  customersCreated: number;
  chargesRetried: number;
  invoicesVoided: number;
  importsRequeued: number;
  lapsedUploadsRemoved: number;
  documentsRemoved: number;
  planProEnded: number;
}> {
  const emailsSent = await deliverDueEmails();
  await pruneRateLimitCounters();
  await pruneIdempotencyKeys();
  const customersCreated = await createMissingProcessorCustomers();
  const chargesRetried = await retryStuckCharges();
  const invoicesVoided = await retryVoidedInvoices();
  const importsRequeued = await requeueStalledImports();
  const lapsedUploadsRemoved = await removeLapsedUploads();
  const documentsRemoved = await removeExpiredDocuments();
  const planProEnded = await endLapsedPlanPro();
  return {
    emailsSent,
    customersCreated,
    chargesRetried,
    invoicesVoided,
    importsRequeued,
    lapsedUploadsRemoved,
    documentsRemoved,
    planProEnded,
  };
}

export function startMaintenanceLoop(intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runMaintenance()
      .catch((error) => logger.error('maintenance failed', { error }))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
