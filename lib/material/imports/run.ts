import { and, eq, isNull, lt, ne, notExists, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { logger } from '../../log';
import { recordAudit } from '../../audit/record';
import { SYSTEM_ACTOR, withAuditScope } from '../../audit/scope';
import { addSeconds, now } from '../../clock';
import { db, type Tx } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { evidenceObjects } from '../../db/schema/audit';
import { evidenceImports } from '../../db/schema/material';
import { transaction } from '../../db/transaction';
import { DomainError } from '../../errors';
import * as businessMetrics from '../../observability/metrics';
import { objectStorage } from '../../storage/configured-storage';
import { hashStream, hashWhileStreaming } from '../evidence-hash';
import { type CommittedBatch, MalformedImportError } from '../importers/batch';
import { importStream } from '../importers';
import { copyInSegments, copySegmentBytesFor, openVerified, type SecuredCopy } from './evidence-copy';
import { type ImportRow, MAX_IMPORT_ATTEMPTS } from './jobs';
import { enqueueNextImport } from './queue';
import { ImportCancelledError, stagedUploadChanged, UploadChangedError } from './run-errors';

/**
 * How long a worker holds an import after each batch: longer than one worker invocation may run
 * (15 minutes), so an import is never run twice at once, and a crashed worker's import can be
 * taken up again once it lapses (by the queue's redelivery, or maintenance: requeueStalledImports).
 */
export const IMPORT_LEASE_SECONDS = 16 * 60;

export type ImportRunOutcome = 'finished' | 'paused' | 'failed' | 'cancelled' | 'skipped';

export interface ImportRunOptions {
  /**
   * Checked after each committed batch, and after each segment of the copy into evidence: true
   * stops there, to continue in another run ('paused').
   */
  shouldPause?: () => boolean;
  /** Told the import's state after each committed batch (the admin command's progress bar). */
  onProgress?: (row: ImportRow) => void;
  /** Items per batch; the importers' own defaults otherwise. */
  batchSize?: number;
}

/**
 * Takes a queued import, or a running one whose worker's lease lapsed (its worker was lost: one
 * attempt spent); null when there is none to take. An organization runs one import at a time, in
 * the order they were queued: an import waits while another of its organization runs or was queued
 * before it (the one that ends sends the next: enqueueNextImport). Two workers claiming two imports
 * of one organization at once: the unique index on running imports lets one through.
 */
async function claimImport(importId: string): Promise<ImportRow | null> {
  const at = now();
  const other = alias(evidenceImports, 'other_import');
  const aheadInItsOrganization = db()
    .select({ id: other.id })
    .from(other)
    .where(
      and(
        eq(other.organizationId, evidenceImports.organizationId),
        ne(other.id, evidenceImports.id),
        or(
          eq(other.status, 'running'),
          and(
            eq(other.status, 'queued'),
            sql`(${other.queuedAt}, ${other.id}) < (${evidenceImports.queuedAt}, ${evidenceImports.id})`,
          ),
        ),
      ),
    );
  try {
    const [claimed] = await db()
      .update(evidenceImports)
      .set({
        status: 'running',
        startedAt: sql`coalesce(${evidenceImports.startedAt}, ${sql.param(at, evidenceImports.startedAt)})`,
        leaseUntil: addSeconds(at, IMPORT_LEASE_SECONDS),
        // Still running when claimed: the worker that held it never came back.
        attempts: sql`${evidenceImports.attempts} + (case when ${evidenceImports.status} = 'running' then 1 else 0 end)`,
      })
      .where(
        and(
          eq(evidenceImports.id, importId),
          or(
            eq(evidenceImports.status, 'queued'),
            and(
              eq(evidenceImports.status, 'running'),
              or(isNull(evidenceImports.leaseUntil), lt(evidenceImports.leaseUntil, at)),
            ),
          ),
          notExists(aheadInItsOrganization),
        ),
      )
      .returning();
    return claimed ?? null;
  } catch (error) {
    if (isUniqueViolation(error, 'evidence_imports_one_running_idx')) return null;
    throw error;
  }
}

/**
 * The first run: the upload becomes the case's source evidence. The bytes the import started with
 * (the staged version /start recorded; UPLOAD_CHANGED if the link stored anything since) are copied
 * into the evidence key, which no link covers, and hashed as they are copied, so the SHA-256 is of
 * exactly the bytes every later read takes (pinned to the version written). A file larger than one
 * segment is copied in segments across runs (evidence-copy.ts): 'paused' when `shouldPause` stopped
 * it between two. A file the admin command stored as evidence itself is hashed where it is. Then the
 * staged upload is removed. `verifyReads`: this run must check what it reads (evidence-copy.ts).
 */
async function secureUpload(
  job: ImportRow,
  shouldPause: () => boolean,
): Promise<{ job: ImportRow; verifyReads: boolean } | 'paused'> {
  const storage = objectStorage();
  let copy: SecuredCopy;
  const inSegments = job.copyUploadId !== null || job.sizeBytes > copySegmentBytesFor(job.sizeBytes);
  if (job.stagingKey && job.stagedVersion && inSegments) {
    const copied = await copyInSegments(job, { shouldPause, leaseSeconds: IMPORT_LEASE_SECONDS });
    if (copied === 'paused') return 'paused';
    copy = copied;
  } else if (job.stagingKey) {
    // One segment (the common case): one streamed copy, as many round trips as ever.
    const source = await storage.read(job.stagingKey, { version: job.stagedVersion ?? undefined });
    if (!source) throw stagedUploadChanged();
    const copied = hashWhileStreaming(source);
    const { version } = await storage.putStream(job.objectKey, copied.stream, job.contentType, {
      size: job.sizeBytes,
    });
    copy = { ...copied.digest(), evidenceVersion: version, verifyReads: false };
  } else {
    const stored = await storage.stat(job.objectKey);
    const body = stored && (await storage.read(job.objectKey, { version: stored.version }));
    if (!stored || !body) throw new UploadChangedError('The imported file is no longer in storage');
    copy = { ...(await hashStream(body)), evidenceVersion: stored.version, verifyReads: false };
  }
  const { sha256, sizeBytes, evidenceVersion } = copy;
  if (sizeBytes !== job.sizeBytes)
    throw new UploadChangedError(`The stored file is ${sizeBytes} bytes, not the ${job.sizeBytes} uploaded`);
  // Recorded even if the import was cancelled meanwhile: the copy is kept evidence either way.
  const secured = await transaction(async (tx, afterCommit) => {
    const [secured] = await tx
      .update(evidenceImports)
      .set({ sha256, evidenceVersion, copyUploadId: null, copyHashState: null })
      .where(eq(evidenceImports.id, job.id))
      .returning();
    await tx
      .insert(evidenceObjects)
      .values({ key: job.objectKey, caseId: job.caseId, sha256, sizeBytes, recordedAt: now() })
      .onConflictDoNothing();
    // The link stays sealed (start sealed it); what it stored is no longer needed.
    const stagingKey = job.stagingKey;
    if (stagingKey) afterCommit(() => storage.delete(stagingKey));
    return secured!;
  });
  if (secured.status !== 'running') throw new ImportCancelledError();
  return { job: secured, verifyReads: copy.verifyReads };
}

/**
 * Every later run (a resumed or retried import) of a file copied in one step first checks that the
 * evidence copy still hashes to what was recorded: the import continues only from the very bytes it
 * started with. (A file copied in segments is checked segment by segment as it is read: openVerified.)
 */
async function verifyEvidence(job: ImportRow): Promise<void> {
  const changed = new UploadChangedError(
    `The stored file is no longer the one hashed when the import started (SHA-256 ${job.sha256}); nothing more is imported from it`,
  );
  const body = await objectStorage().read(job.objectKey, { version: job.evidenceVersion ?? undefined });
  if (!body) throw changed;
  const { sha256, sizeBytes } = await hashStream(body);
  if (sha256 !== job.sha256 || sizeBytes !== job.sizeBytes) throw changed;
}

/** The batch's progress and checkpoint, written in the batch's own transaction; the lease renewed. */
async function recordBatch(tx: Tx, importId: string, batch: CommittedBatch): Promise<ImportRow> {
  const [row] = await tx
    .update(evidenceImports)
    .set({
      bytesRead: batch.next.byteOffset,
      itemsRead: batch.next.itemIndex,
      itemsImported: sql`${evidenceImports.itemsImported} + ${batch.imported}`,
      itemsSkipped: sql`${evidenceImports.itemsSkipped} + ${batch.skipped}`,
      leaseUntil: addSeconds(now(), IMPORT_LEASE_SECONDS),
    })
    .where(and(eq(evidenceImports.id, importId), eq(evidenceImports.status, 'running')))
    .returning();
  // Cancelled meanwhile: throwing rolls the batch back, and the worker stops.
  if (!row) throw new ImportCancelledError();
  return row;
}

/**
 * The import's last state, with the `evidence.import.finished` event, in one transaction; null when
 * it was cancelled meanwhile (the cancel recorded its own event). The organization's next queued
 * import is sent to the worker once this one has ended.
 */
async function finishImport(
  job: ImportRow,
  outcome:
    | { status: 'succeeded' }
    | { status: 'failed'; code: string; message: string; itemIndex?: number; attempts?: number },
): Promise<ImportRow | null> {
  return transaction(async (tx, afterCommit) => {
    const failed = outcome.status === 'failed' ? outcome : null;
    const [row] = await tx
      .update(evidenceImports)
      .set({
        status: outcome.status,
        ...(failed ? {} : { bytesRead: job.sizeBytes }),
        ...(failed?.attempts === undefined ? {} : { attempts: failed.attempts }),
        errorCode: failed?.code ?? null,
        errorMessage: failed?.message ?? null,
        errorItemIndex: failed?.itemIndex ?? null,
        leaseUntil: null,
        finishedAt: now(),
      })
      .where(and(eq(evidenceImports.id, job.id), eq(evidenceImports.status, 'running')))
      .returning();
    if (!row) return null;
    recordAudit(tx, {
      action: 'evidence.import.finished',
      organizationId: job.organizationId,
      caseId: job.caseId,
      target: { type: 'import', id: job.id },
      metadata: {
        status: outcome.status,
        itemsRead: row.itemsRead,
        itemsImported: row.itemsImported,
        itemsSkipped: row.itemsSkipped,
        ...(failed ? { error: failed.code, itemIndex: failed.itemIndex ?? null } : {}),
      },
    });
    afterCommit(async () => businessMetrics.importFinished(job.kind, outcome.status, row.itemsImported));
    afterCommit(() => enqueueNextImport(job.organizationId));
    return row;
  });
}

/** Queued again with its turn kept (its queuedAt), for the next run to take at once: a pause is not a lost worker. */
async function pauseImport(job: ImportRow): Promise<'paused'> {
  await db()
    .update(evidenceImports)
    .set({ status: 'queued', leaseUntil: null })
    .where(and(eq(evidenceImports.id, job.id), eq(evidenceImports.status, 'running')));
  return 'paused';
}

/** What a failure tells the user: the file's fault and refusals by name; anything else without internals. */
function failureOf(error: unknown): { code: string; message: string; itemIndex?: number } | null {
  if (error instanceof MalformedImportError)
    return {
      code: error.code,
      message: error.message,
      ...(error.itemIndex === undefined ? {} : { itemIndex: error.itemIndex }),
    };
  if (error instanceof UploadChangedError) return { code: error.code, message: error.message };
  if (error instanceof DomainError) return { code: error.code, message: error.message };
  return null;
}

/** The failure of an import whose runs have all ended without finishing. */
const attemptsExhausted = (attempts: number) => ({
  code: 'ATTEMPTS_EXHAUSTED',
  message:
    `The import stopped ${attempts} times without finishing (its worker was lost or hit an unexpected error), ` +
    "so it is not tried again. What it imported stays; cancel it, and contact support with this import's id.",
  attempts,
});

/**
 * Runs one import as the worker does, in the cloud (infra/functions/import-worker.ts, one SQS
 * message each) and locally (the in-process queue, the admin command): claims it, secures the
 * upload as evidence on the first runs (a large file a segment at a time; a later run re-checks the
 * hash, segment by segment as it reads for a file copied in segments), then imports in batches from
 * the last checkpoint, each batch committing its items with the import's progress. 'paused' when
 * `shouldPause` stopped it between batches or copy segments (it is queued again, keeping its turn,
 * spending no attempt; the caller sends it again); 'failed' for a malformed or changed file or a
 * refusal (the error is on the import; what earlier batches committed stays) and once its attempts
 * are spent; 'cancelled' when it was cancelled while running; 'skipped' when there was nothing to
 * claim (or its organization's turn is another import's). An unexpected error marks the import
 * failed with INTERNAL (a retry resumes it), spends an attempt, and is rethrown.
 */
export async function runImport(importId: string, options: ImportRunOptions = {}): Promise<ImportRunOutcome> {
  const claimed = await claimImport(importId);
  if (!claimed) return 'skipped';
  // The worker's writes are the system's, on behalf of the user who created the import (each item's importedBy).
  return withAuditScope({ actor: SYSTEM_ACTOR, ip: null, userAgent: null, requestId: claimed.id }, async () => {
    let job = claimed;
    if (job.attempts >= MAX_IMPORT_ATTEMPTS) {
      const failed = await finishImport(job, { status: 'failed', ...attemptsExhausted(job.attempts) });
      if (failed) options.onProgress?.(failed);
      return failed ? 'failed' : 'cancelled';
    }
    try {
      let verifyReads = job.sha256 !== null && job.copySegmentBytes !== null;
      if (job.sha256) {
        if (!verifyReads) await verifyEvidence(job);
      } else {
        const secured = await secureUpload(job, () => options.shouldPause?.() ?? false);
        if (secured === 'paused') return await pauseImport(job);
        ({ job, verifyReads } = secured);
      }
      const storage = objectStorage();
      const version = job.evidenceVersion ?? undefined;
      const openChecked = verifyReads ? openVerified(job) : null;
      const result = await importStream(job.kind, {
        target: {
          caseId: job.caseId,
          organizationId: job.organizationId,
          importSource: job.fileName,
          importedById: job.createdById,
          importId: job.id,
          ...(job.profile ? { profileName: job.profile } : {}),
        },
        open: async (start) => {
          if (openChecked) return openChecked(start);
          const body = await storage.read(job.objectKey, { start, version });
          if (!body) throw new UploadChangedError('The imported file is no longer in storage as it was hashed');
          return body;
        },
        from: { byteOffset: job.bytesRead, itemIndex: job.itemsRead },
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
        onBatch: async (tx, batch) => {
          job = await recordBatch(tx, job.id, batch);
        },
        shouldPause: () => {
          options.onProgress?.(job);
          return options.shouldPause?.() ?? false;
        },
      });
      if (!result.finished) return await pauseImport(job);
      // Evaluated first: `onProgress?.(await …)` would skip the call's argument, the finish itself, without a listener.
      const succeeded = await finishImport(job, { status: 'succeeded' });
      if (!succeeded) return 'cancelled';
      options.onProgress?.(succeeded);
      return 'finished';
    } catch (error) {
      if (error instanceof ImportCancelledError) return 'cancelled';
      const failure = failureOf(error);
      if (!failure) logger.error('import failed unexpectedly', { error, importId: job.id });
      const attempts = job.attempts + 1;
      const reason =
        failure ??
        (attempts >= MAX_IMPORT_ATTEMPTS
          ? attemptsExhausted(attempts)
          : {
              code: 'INTERNAL',
              message: 'The import stopped on an unexpected error; retry resumes it',
              attempts,
            });
      const failed = await finishImport(job, { status: 'failed', ...reason });
      if (failed) options.onProgress?.(failed);
      if (!failure) throw error;
      return failed ? 'failed' : 'cancelled';
    }
  });
}
