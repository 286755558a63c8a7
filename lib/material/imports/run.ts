import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { logger } from '../../log';
import { recordAudit, SYSTEM_ACTOR, withAuditScope } from '../../audit';
import { addSeconds, now } from '../../clock';
import { db, type Tx } from '../../db/client';
import { evidenceImports, evidenceObjects } from '../../db/schema';
import { transaction } from '../../db/transaction';
import { DomainError } from '../../errors';
import * as businessMetrics from '../../observability/metrics';
import { objectStorage } from '../../storage';
import { hashStream } from '../evidence-hash';
import { type CommittedBatch, MalformedImportError } from '../importers/batch';
import { importStream } from '../importers';
import type { ImportRow } from './jobs';

/**
 * How long a worker holds an import after each batch: longer than one worker invocation may run
 * (15 minutes), so an import is never run twice at once, and a crashed worker's import can be
 * taken up again once it lapses (by the queue's redelivery, or maintenance: requeueStalledImports).
 */
export const IMPORT_LEASE_SECONDS = 16 * 60;

export type ImportRunOutcome = 'finished' | 'paused' | 'failed' | 'skipped';

export interface ImportRunOptions {
  /** Checked after each committed batch: true stops there, to continue in another run ('paused'). */
  shouldPause?: () => boolean;
  /** Told the import's state after each committed batch (the admin command's progress bar). */
  onProgress?: (row: ImportRow) => void;
  /** Items per batch; the importers' own defaults otherwise. */
  batchSize?: number;
}

/** Takes a queued import, or a running one whose worker's lease lapsed; null when there is none to take. */
async function claimImport(importId: string): Promise<ImportRow | null> {
  const at = now();
  const [claimed] = await db()
    .update(evidenceImports)
    .set({
      status: 'running',
      startedAt: sql`coalesce(${evidenceImports.startedAt}, ${sql.param(at, evidenceImports.startedAt)})`,
      leaseUntil: addSeconds(at, IMPORT_LEASE_SECONDS),
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
      ),
    )
    .returning();
  return claimed ?? null;
}

/** The stored upload is gone, or not the size it was uploaded with: the import fails with UPLOAD_CHANGED. */
class UploadChangedError extends Error {
  readonly code = 'UPLOAD_CHANGED';
}

/**
 * The uploaded file's SHA-256, read once before the import: kept on the import and in
 * evidence_objects (downloads check it), so the source file is provable evidence like its items.
 */
async function hashUpload(job: ImportRow): Promise<ImportRow> {
  const body = await objectStorage().read(job.objectKey);
  if (!body) throw new UploadChangedError('The uploaded file is no longer in storage');
  const { sha256, sizeBytes } = await hashStream(body);
  if (sizeBytes !== job.sizeBytes)
    throw new UploadChangedError(`The stored file is ${sizeBytes} bytes, not the ${job.sizeBytes} uploaded`);
  return transaction(async (tx) => {
    await tx
      .insert(evidenceObjects)
      .values({ key: job.objectKey, caseId: job.caseId, sha256, sizeBytes, recordedAt: now() })
      .onConflictDoNothing();
    const [hashed] = await tx.update(evidenceImports).set({ sha256 }).where(eq(evidenceImports.id, job.id)).returning();
    return hashed!;
  });
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
    .where(eq(evidenceImports.id, importId))
    .returning();
  return row!;
}

/** The import's last state, with the `evidence.import.finished` event, in one transaction. */
async function finishImport(
  job: ImportRow,
  outcome: { status: 'succeeded' } | { status: 'failed'; code: string; message: string; itemIndex?: number },
): Promise<ImportRow> {
  return transaction(async (tx, afterCommit) => {
    const failed = outcome.status === 'failed' ? outcome : null;
    const [row] = await tx
      .update(evidenceImports)
      .set({
        status: outcome.status,
        ...(failed ? {} : { bytesRead: job.sizeBytes }),
        errorCode: failed?.code ?? null,
        errorMessage: failed?.message ?? null,
        errorItemIndex: failed?.itemIndex ?? null,
        leaseUntil: null,
        finishedAt: now(),
      })
      .where(eq(evidenceImports.id, job.id))
      .returning();
    recordAudit(tx, {
      action: 'evidence.import.finished',
      organizationId: job.organizationId,
      caseId: job.caseId,
      target: { type: 'import', id: job.id },
      metadata: {
        status: outcome.status,
        itemsRead: row!.itemsRead,
        itemsImported: row!.itemsImported,
        itemsSkipped: row!.itemsSkipped,
        ...(failed ? { error: failed.code, itemIndex: failed.itemIndex ?? null } : {}),
      },
    });
    afterCommit(async () => businessMetrics.importFinished(job.kind, outcome.status, row!.itemsImported));
    return row!;
  });
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

/**
 * Runs one import as the worker does, in the cloud (infra/functions/import-worker.ts, one SQS
 * message each) and locally (the in-process queue, the admin command): claims it, hashes the
 * upload on the first run, then imports in batches from the last checkpoint, each batch
 * committing its items with the import's progress. 'paused' when `shouldPause` stopped it between
 * batches (the caller queues it again); 'failed' for a malformed file or a refusal (the error is on
 * the import; what earlier batches committed stays); 'skipped' when there was nothing to claim.
 * An unexpected error marks the import failed with INTERNAL (a retry resumes it) and is rethrown.
 */
export async function runImport(importId: string, options: ImportRunOptions = {}): Promise<ImportRunOutcome> {
  const claimed = await claimImport(importId);
  if (!claimed) return 'skipped';
  // The worker's writes are the system's, on behalf of the user who created the import (each item's importedBy).
  return withAuditScope({ actor: SYSTEM_ACTOR, ip: null, userAgent: null, requestId: claimed.id }, async () => {
    let job = claimed;
    try {
      if (!job.sha256) job = await hashUpload(job);
      const storage = objectStorage();
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
          const body = await storage.read(job.objectKey, { start });
          if (!body) throw new UploadChangedError('The uploaded file is no longer in storage');
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
      if (!result.finished) {
        // Let the next run take it at once rather than after the lease.
        await db().update(evidenceImports).set({ leaseUntil: null }).where(eq(evidenceImports.id, job.id));
        return 'paused';
      }
      // Evaluated first: `onProgress?.(await …)` would skip the call's argument, the finish itself, without a listener.
      const succeeded = await finishImport(job, { status: 'succeeded' });
      options.onProgress?.(succeeded);
      return 'finished';
    } catch (error) {
      const failure = failureOf(error);
      if (!failure) logger.error('import failed unexpectedly', { error, importId: job.id });
      const reason = failure ?? {
        code: 'INTERNAL',
        message: 'The import stopped on an unexpected error; retry resumes it',
      };
      const failed = await finishImport(job, { status: 'failed', ...reason });
      options.onProgress?.(failed);
      if (!failure) throw error;
      return 'failed';
    }
  });
}
