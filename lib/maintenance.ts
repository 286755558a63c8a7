import { continueFullVerifications } from './audit/full-verification';
import { pruneSignInAddresses } from './auth/sign-in-addresses';
import { retryVoidedInvoices } from './billing/close-voided-invoice';
import { retryStuckCharges } from './billing/invoice-charge';
import { endLapsedPlanPro } from './billing/case-pro';
import { createMissingProcessorCustomers } from './billing/customers';
import { pruneIdempotencyKeys } from './idempotency';
import { logger } from './log';
import { deliverDueEmails } from './mail/outbox';
import { requeueStalledCustodyExports } from './material/custody-exports';
import { requeueStalledImports } from './material/imports/queue';
import { reportImportsNearStagingExpiry } from './material/imports/staging-watch';
import { removeLapsedUploads } from './material/lapsed-uploads';
import { pruneRateLimitCounters } from './rate-limit';
import { requeueStalledTaggingJobs } from './review/tagging/tagging-jobs';
import { removeExpiredAnswers } from './storage/answers';
import { removeExpiredDocuments } from './storage/generated-documents';

/** What one maintenance run did, counted (a type, not an interface: the logger takes it as attributes). */
export type MaintenanceCounts = {
  emailsSent: number;
  customersCreated: number;
  chargesRetried: number;
  invoicesVoided: number;
  importsRequeued: number;
  custodyExportsRequeued: number;
  taggingJobsRequeued: number;
  importsNearStagingExpiry: number;
  lapsedUploadsRemoved: number;
  documentsRemoved: number;
  answersRemoved: number;
  planProEnded: number;
  auditEventsVerified: number;
};

/** Each count's words, in the order printed: a count without words here does not compile. */
export const MAINTENANCE_COUNT_LABELS: Record<keyof MaintenanceCounts, string> = {
  emailsSent: 'email(s) sent',
  customersCreated: 'processor customer(s) created',
  chargesRetried: 'charge(s) retried',
  invoicesVoided: 'invoice(s) voided',
  importsRequeued: 'import(s) requeued',
  custodyExportsRequeued: 'custody export(s) requeued',
  taggingJobsRequeued: 'tagging job(s) requeued',
  importsNearStagingExpiry: 'import(s) waiting near the staging expiry',
  lapsedUploadsRemoved: 'lapsed upload(s) removed',
  documentsRemoved: 'generated document(s) removed',
  answersRemoved: 'stored large answer(s) removed',
  planProEnded: 'case(s) no longer Pro through their plan',
  auditEventsVerified: 'audit event(s) re-verified',
};

/** One line with every count of a run: `0 email(s) sent, 1 charge(s) retried, ...`. */
export function describeMaintenance(counts: MaintenanceCounts): string {
  return (Object.keys(MAINTENANCE_COUNT_LABELS) as (keyof MaintenanceCounts)[])
    .map((key) => `${counts[key]} ${MAINTENANCE_COUNT_LABELS[key]}`)
    .join(', ');
}

/**
 * Periodic upkeep: retry due emails from the outbox, drop old rate-limit windows, idempotency
 * answers past their 24 hours and sign-in addresses unused for 90 days, and create the
 * payment-processor customers and invoices that could not be created (or voided) at the time,
 * send stalled evidence imports, custody exports and tagging jobs to the worker again, report imports waiting so long that their
 * upload nears the staging expiry, and remove uploads never started (their
 * objects, then their reservations) and generated documents past their expiry, and end the Pro of
 * cases whose plan no longer includes it, and go on with the full re-verification of the audit
 * chains (lib/audit/full-verification.ts), a bounded batch a run. The local
 * server runs it on a timer; in the cloud a scheduled function runs the same call.
 */
export async function runMaintenance(): Promise<MaintenanceCounts> {
  const emailsSent = await deliverDueEmails();
  await pruneRateLimitCounters();
  await pruneIdempotencyKeys();
  await pruneSignInAddresses();
  const customersCreated = await createMissingProcessorCustomers();
  const chargesRetried = await retryStuckCharges();
  const invoicesVoided = await retryVoidedInvoices();
  const importsRequeued = await requeueStalledImports();
  const custodyExportsRequeued = await requeueStalledCustodyExports();
  const taggingJobsRequeued = await requeueStalledTaggingJobs();
  const importsNearStagingExpiry = await reportImportsNearStagingExpiry();
  const lapsedUploadsRemoved = await removeLapsedUploads();
  const documentsRemoved = await removeExpiredDocuments();
  // The local store's answers past their link (the cloud's lifecycle rule removes them there).
  const answersRemoved = await removeExpiredAnswers();
  const planProEnded = await endLapsedPlanPro();
  const auditEventsVerified = await continueFullVerifications();
  return {
    emailsSent,
    customersCreated,
    chargesRetried,
    invoicesVoided,
    importsRequeued,
    custodyExportsRequeued,
    taggingJobsRequeued,
    importsNearStagingExpiry,
    lapsedUploadsRemoved,
    documentsRemoved,
    answersRemoved,
    planProEnded,
    auditEventsVerified,
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
