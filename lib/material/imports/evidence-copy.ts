import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { and, asc, eq, gte } from 'drizzle-orm';
import { addSeconds, now } from '../../clock';
import { config } from '../../config';
import { db } from '../../db/client';
import { evidenceImports, evidenceImportSegments } from '../../db/schema/material';
import { transaction } from '../../db/transaction';
import { objectStorage } from '../../storage/configured-storage';
import { MAX_PARTS, NoSuchUploadError } from '../../storage/object-storage';
import { hashStream } from '../evidence-hash';
import { ResumableSha256 } from '../resumable-sha256';
import type { ImportRow } from './find';
import { ImportCancelledError, stagedUploadChanged, UploadChangedError } from './run-errors';

/**
 * The worker's copy of a staged upload into evidence, in segments for a file larger than one, so
 * that a 5 TiB import is copied and hashed across as many worker runs as it takes: each segment is
 * copied within the store (S3: UploadPartCopy into a multipart upload of the evidence key) while
 * its bytes, read from the same pinned staged version, are hashed; after each segment the import
 * row keeps the checkpoint (bytes copied, the whole file's hash state) and the segment's own
 * SHA-256 and part ETag (evidence_import_segments), so a run can stop between segments and the next
 * continues there. Later runs check each segment they read against its SHA-256 (openVerified).
 */

/** 1 GiB: hashed in a few seconds (so a run stops within its pause margin), 5 TiB in 5,120 S3 parts. */
export const COPY_SEGMENT_BYTES = 1024 ** 3;
const MIB = 1024 ** 2;

/** The segment size of a file's copy: 1 GiB, more only to stay within S3's 10,000 parts; lowered by IMPORT_COPY_SEGMENT_BYTES. */
export function copySegmentBytesFor(sizeBytes: number): number {
  const bySize = Math.max(COPY_SEGMENT_BYTES, Math.ceil(sizeBytes / MAX_PARTS / MIB) * MIB);
  const configured = config().IMPORT_COPY_SEGMENT_BYTES;
  return configured !== undefined && configured < bySize && Math.ceil(sizeBytes / configured) <= MAX_PARTS
    ? configured
    : bySize;
}

export interface CopyRun {
  /** Asked after each segment: true stops there, to continue in another run. */
  shouldPause: () => boolean;
  /** How long each checkpoint renews the worker's lease (run.ts IMPORT_LEASE_SECONDS). */
  leaseSeconds: number;
}

export interface SecuredCopy {
  sha256: string;
  sizeBytes: number;
  evidenceVersion: string;
  /** The copy was found completed by an earlier run that stopped before recording it: reads are checked. */
  verifyReads: boolean;
}

/** The row's checkpoint written while it still runs; a cancelled import aborts the copy's upload and stops. */
async function checkpoint(
  job: ImportRow,
  run: CopyRun,
  values: Partial<typeof evidenceImports.$inferInsert>,
  segment?: typeof evidenceImportSegments.$inferInsert,
): Promise<ImportRow> {
  const row = await transaction(async (tx) => {
    if (segment) await tx.insert(evidenceImportSegments).values(segment);
    const [row] = await tx
      .update(evidenceImports)
      .set({ ...values, leaseUntil: addSeconds(now(), run.leaseSeconds) })
      .where(and(eq(evidenceImports.id, job.id), eq(evidenceImports.status, 'running')))
      .returning();
    return row ?? null;
  });
  if (row) return row;
  const uploadId = values.copyUploadId ?? job.copyUploadId;
  // Cancelled meanwhile: what was copied is no evidence yet, and an open upload's parts are billed.
  if (uploadId) await objectStorage().abortMultipartUpload(job.objectKey, uploadId);
  throw new ImportCancelledError();
}

/** Hashes [start, end) of the pinned staged version into `whole` and its own SHA-256. */
async function hashRange(
  key: string,
  version: string,
  range: { start: number; end: number },
  whole: ResumableSha256,
): Promise<string> {
  const body = await objectStorage().read(key, { version, ...range });
  if (!body) throw stagedUploadChanged();
  const segment = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    segment.update(chunk);
    whole.update(chunk);
    sizeBytes += chunk.byteLength;
  }
  if (sizeBytes !== range.end - range.start) throw stagedUploadChanged();
  return segment.digest('hex');
}

/**
 * Copies the staged version `job.stagedVersion` into the evidence key segment by segment from the
 * checkpoint, asking `shouldPause` after each segment: 'paused' when it said so (the checkpoint
 * is kept), else the whole file's SHA-256 and the evidence version written. UPLOAD_CHANGED (the
 * copy abandoned and forgotten) when the staged version is gone; an unexpected error keeps the
 * checkpoint for the next run; a copy whose upload is gone starts again.
 */
export async function copyInSegments(job: ImportRow, run: CopyRun, restarted = false): Promise<SecuredCopy | 'paused'> {
  const storage = objectStorage();
  const source = { key: job.stagingKey!, version: job.stagedVersion! };
  let row = job;
  try {
    if (!row.copyUploadId) {
      const copyUploadId = await storage.createMultipartUpload(job.objectKey, job.contentType);
      row = await checkpoint(row, run, {
        copyUploadId,
        copySegmentBytes: copySegmentBytesFor(job.sizeBytes),
        copiedBytes: 0,
        copyHashState: (await ResumableSha256.create()).save(),
      });
    }
    const uploadId = row.copyUploadId!;
    const segmentBytes = row.copySegmentBytes!;
    const hash = await ResumableSha256.load(row.copyHashState!);
    // Every run copies at least one segment, as it imports at least one batch: each run moves on.
    let copiedThisRun = false;
    while (row.copiedBytes < job.sizeBytes) {
      if (copiedThisRun && run.shouldPause()) return 'paused';
      copiedThisRun = true;
      const range = { start: row.copiedBytes, end: Math.min(job.sizeBytes, row.copiedBytes + segmentBytes) };
      const segment = range.start / segmentBytes;
      // The store copies while this run reads and hashes the same version's same bytes.
      const [part, sha256] = await Promise.all([
        storage.copyPart(source, range, { key: job.objectKey, uploadId, partNumber: segment + 1 }),
        hashRange(source.key, source.version, range, hash),
      ]);
      if (!part) throw stagedUploadChanged();
      row = await checkpoint(
        row,
        run,
        { copiedBytes: range.end, copyHashState: hash.save() },
        { importId: job.id, segment, sha256, sizeBytes: range.end - range.start, partEtag: part.etag },
      );
    }
    const parts = (
      await db()
        .select()
        .from(evidenceImportSegments)
        .where(eq(evidenceImportSegments.importId, job.id))
        .orderBy(asc(evidenceImportSegments.segment))
    ).map((s) => ({ partNumber: s.segment + 1, sizeBytes: s.sizeBytes, etag: s.partEtag }));
    const completed = await completeCopy(row, uploadId, parts);
    return { sha256: hash.digest(), sizeBytes: row.copiedBytes, ...completed };
  } catch (error) {
    if (error instanceof UploadChangedError) await forgetCopy(row);
    // The copy's upload is gone (the evidence bucket's lifecycle rule aborts one after 7 days, as a
    // copy left failed that long is): the copy starts again, once.
    if (error instanceof NoSuchUploadError && !restarted) {
      await forgetCopy(row);
      return copyInSegments(
        { ...row, copyUploadId: null, copySegmentBytes: null, copiedBytes: 0, copyHashState: null },
        run,
        true,
      );
    }
    throw error;
  }
}

/**
 * Completes the evidence upload. A run that completed it and stopped before recording the version
 * finds no upload: the object it made is taken (no one else writes the import's evidence key), and
 * every read of it is checked segment by segment. Otherwise the failure stands (the next run
 * completes again).
 */
async function completeCopy(
  row: ImportRow,
  uploadId: string,
  parts: { partNumber: number; sizeBytes: number; etag: string }[],
): Promise<{ evidenceVersion: string; verifyReads: boolean }> {
  const storage = objectStorage();
  try {
    return {
      evidenceVersion: (await storage.completeMultipartUpload(row.objectKey, uploadId, parts)).version,
      verifyReads: false,
    };
  } catch (error) {
    const stored = await storage.stat(row.objectKey);
    if (!stored || stored.size !== row.sizeBytes) throw error;
    return { evidenceVersion: stored.version, verifyReads: true };
  }
}

/** An abandoned copy: its upload aborted, its checkpoint and segments gone (a retry starts it again). */
async function forgetCopy(row: ImportRow): Promise<void> {
  if (row.copyUploadId) await objectStorage().abortMultipartUpload(row.objectKey, row.copyUploadId);
  await transaction(async (tx) => {
    await tx.delete(evidenceImportSegments).where(eq(evidenceImportSegments.importId, row.id));
    await tx
      .update(evidenceImports)
      .set({ copyUploadId: null, copySegmentBytes: null, copiedBytes: 0, copyHashState: null })
      .where(eq(evidenceImports.id, row.id));
  });
}

/**
 * The evidence copy from byte `start`, each segment read checked first: the segment (pinned to the
 * version written) is hashed whole and compared with the SHA-256 taken as it was copied, then its
 * bytes from `start` are passed on. A run reads, and so checks, only the segments from its
 * checkpoint on: no run hashes the whole file, and every byte imported was checked in that run.
 */
export function openVerified(job: ImportRow): (start: number) => Promise<Readable> {
  const segmentBytes = job.copySegmentBytes!;
  const changed = new UploadChangedError(
    `The stored file is no longer the one hashed when the import started (SHA-256 ${job.sha256}); nothing more is imported from it`,
  );
  const storage = objectStorage();
  const version = job.evidenceVersion ?? undefined;
  return async (start) => {
    const first = Math.floor(start / segmentBytes);
    const segments = await db()
      .select()
      .from(evidenceImportSegments)
      .where(and(eq(evidenceImportSegments.importId, job.id), gte(evidenceImportSegments.segment, first)))
      .orderBy(asc(evidenceImportSegments.segment));
    const total = Math.ceil(job.sizeBytes / segmentBytes);
    if (start < job.sizeBytes && segments.length !== total - first)
      throw new Error(`Import ${job.id} has ${segments.length} of its segments from ${first}, not ${total - first}`);
    async function* verified() {
      for (const segment of segments) {
        const range = {
          start: segment.segment * segmentBytes,
          end: segment.segment * segmentBytes + segment.sizeBytes,
        };
        const whole = await storage.read(job.objectKey, { version, ...range });
        if (!whole) throw changed;
        const actual = await hashStream(whole);
        if (actual.sha256 !== segment.sha256 || actual.sizeBytes !== segment.sizeBytes) throw changed;
        const body = await storage.read(job.objectKey, {
          version,
          start: Math.max(start, range.start),
          end: range.end,
        });
        if (!body) throw changed;
        try {
          yield* body as AsyncIterable<Buffer>;
        } finally {
          // A run that pauses mid-segment stops reading here: the file or connection is let go now.
          body.destroy();
        }
      }
    }
    return Readable.from(verified(), { objectMode: false });
  };
}
