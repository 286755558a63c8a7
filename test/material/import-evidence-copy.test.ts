import { Buffer } from 'node:buffer';
import type { Readable } from 'node:stream';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { emails, evidenceImportSegments, evidenceImports, evidenceObjects } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { runImport } from '../../lib/material/imports/run';
import { type ObjectStorage, objectStorage, type ReadOptions, useObjectStorage } from '../../lib/storage';
import { expectData, invoke } from '../harness/invoke';
import { asOwner, importServer, mboxMessage, type Setup, sha256 } from './import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29, the 5 TiB end: the worker's copy of an upload into evidence, and its re-check on later
 * runs, go segment by segment across runs. Segments are 100 bytes here (IMPORT_COPY_SEGMENT_BYTES),
 * 1 GiB in use: a run copies segments until it is told to pause, the next one continues from the
 * checkpoint, and the SHA-256 is of the whole file; later runs check each segment they read.
 */

const SEGMENT = 100;
const flow = importServer();
let restoreConfig: () => void;
beforeAll(() => {
  restoreConfig = overrideConfig({ IMPORT_COPY_SEGMENT_BYTES: SEGMENT });
});
afterAll(() => restoreConfig());

const MESSAGES = 6;
const TEXT = Array.from({ length: MESSAGES }, (_, i) => mboxMessage(`c${i}`, `Copied ${i}`)).join('');
const BYTES = Buffer.from(TEXT);
const SEGMENTS = Math.ceil(BYTES.length / SEGMENT);

const rowOf = async (importId: string) =>
  (await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId)))[0]!;
const segmentsOf = async (importId: string) =>
  db()
    .select()
    .from(evidenceImportSegments)
    .where(eq(evidenceImportSegments.importId, importId))
    .orderBy(asc(evidenceImportSegments.segment));
const emailCount = async (caseId: string) => (await db().select().from(emails).where(eq(emails.caseId, caseId))).length;

async function bytesOf(stream: Readable | null): Promise<Buffer | null> {
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function startedWithoutWorker(s: Setup, text = TEXT) {
  const created = await flow.createUploaded(s, text);
  await flow.startQueued(s, created.import.id);
  return created.import.id as string;
}

/** Pauses as the cloud worker does when its time is short: here after every segment and batch. */
const pauseEveryTime = { batchSize: 1, shouldPause: () => true };

/** The store, recording every read of a key (what a run hashed or imported). */
function recordingReads(): { reads: { key: string; options: ReadOptions }[]; restore: () => void } {
  const inner = objectStorage();
  const reads: { key: string; options: ReadOptions }[] = [];
  const recording: ObjectStorage = Object.create(inner);
  recording.read = (key, options = {}) => {
    reads.push({ key, options });
    return inner.read(key, options);
  };
  useObjectStorage(recording);
  return { reads, restore: () => useObjectStorage(inner) };
}

describe('copying an upload into evidence across runs', () => {
  it('copies one segment a run while told to pause, spends no attempt, and records the whole file hash', async () => {
    expect(SEGMENTS).toBeGreaterThan(5);
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);

    expect(await runImport(importId, pauseEveryTime)).toBe('paused');

    const paused = await rowOf(importId);
    expect(paused).toMatchObject({
      status: 'queued',
      attempts: 0,
      sha256: null,
      copySegmentBytes: SEGMENT,
      copiedBytes: SEGMENT,
      itemsRead: 0,
    });
    expect(paused.copyUploadId).not.toBeNull();
    expect(paused.copyHashState).not.toBeNull();
    expect(await objectStorage().size(paused.objectKey)).toBeNull();

    let runs = 1;
    while ((await rowOf(importId)).sha256 === null) {
      expect(await runImport(importId, pauseEveryTime)).toBe('paused');
      runs += 1;
    }
    expect(runs).toBe(SEGMENTS);
    const copied = await rowOf(importId);
    expect(copied).toMatchObject({
      status: 'queued',
      attempts: 0,
      sha256: sha256(TEXT),
      copiedBytes: BYTES.length,
      copyUploadId: null,
      copyHashState: null,
      // The run that copied the last segment went on to import one batch.
      itemsRead: 1,
    });
    expect(await bytesOf(await objectStorage().read(copied.objectKey, { version: copied.evidenceVersion! }))).toEqual(
      BYTES,
    );
    expect(await objectStorage().size(copied.stagingKey!)).toBeNull();
    const segments = await segmentsOf(importId);
    expect(segments.map((segment) => segment.sha256)).toEqual(
      Array.from({ length: SEGMENTS }, (_, i) => sha256(BYTES.subarray(i * SEGMENT, (i + 1) * SEGMENT))),
    );
    const [object] = await db().select().from(evidenceObjects).where(eq(evidenceObjects.key, copied.objectKey));
    expect(object).toMatchObject({ sha256: sha256(TEXT), sizeBytes: BYTES.length });

    expect(await runImport(importId)).toBe('finished');
    expect(await flow.read(s, importId)).toMatchObject({
      status: 'succeeded',
      sha256: sha256(TEXT),
      progress: { itemsImported: MESSAGES },
    });
    expect(await emailCount(s.caseId)).toBe(MESSAGES);
  });

  it('a file of one segment is copied in one step, as before: no segments, no checkpoint', async () => {
    const s = await caseWithOwner();
    const small = mboxMessage('small', 'S');
    expect(Buffer.byteLength(small)).toBeLessThanOrEqual(SEGMENT * 3);
    const restore = overrideConfig({ IMPORT_COPY_SEGMENT_BYTES: SEGMENT * 3 });
    try {
      const importId = await startedWithoutWorker(s, small);
      expect(await runImport(importId, pauseEveryTime)).not.toBe('failed');
      expect(await rowOf(importId)).toMatchObject({
        sha256: sha256(small),
        copySegmentBytes: null,
        copyUploadId: null,
      });
      expect(await segmentsOf(importId)).toEqual([]);
    } finally {
      restore();
    }
  });

  it('a worker lost mid-copy: the next run copies again from the last checkpoint, one attempt spent', async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    expect(await runImport(importId, pauseEveryTime)).toBe('paused');
    expect(await runImport(importId, pauseEveryTime)).toBe('paused');
    // Lost after copying (not recording) a third segment: its part is copied again, over it.
    await db()
      .update(evidenceImports)
      .set({ status: 'running', leaseUntil: new Date(0) })
      .where(eq(evidenceImports.id, importId));

    expect(await runImport(importId)).toBe('finished');

    expect(await rowOf(importId)).toMatchObject({ status: 'succeeded', attempts: 1, sha256: sha256(TEXT) });
    expect(await emailCount(s.caseId)).toBe(MESSAGES);
  });

  it("a copy whose evidence upload is gone (the bucket's lifecycle aborts one after 7 days) starts again", async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    expect(await runImport(importId, pauseEveryTime)).toBe('paused');
    expect(await runImport(importId, pauseEveryTime)).toBe('paused');
    const paused = await rowOf(importId);
    await objectStorage().abortMultipartUpload(paused.objectKey, paused.copyUploadId!);

    expect(await runImport(importId, pauseEveryTime)).toBe('paused');

    const restarted = await rowOf(importId);
    expect(restarted).toMatchObject({ status: 'queued', attempts: 0, copiedBytes: SEGMENT });
    expect(restarted.copyUploadId).not.toBe(paused.copyUploadId);
    expect(await segmentsOf(importId)).toHaveLength(1);
    expect(await runImport(importId)).toBe('finished');
    expect(await rowOf(importId)).toMatchObject({ status: 'succeeded', sha256: sha256(TEXT) });
  });

  it('a run lost between completing the copy and recording it: the retry takes the object made, checking every segment it reads', async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    const inner = objectStorage();
    const crashing: ObjectStorage = Object.create(inner);
    // The upload completes, and the worker is gone before it hears back or can look.
    crashing.completeMultipartUpload = async (key, uploadId, parts) => {
      await inner.completeMultipartUpload(key, uploadId, parts);
      throw new Error('worker lost after CompleteMultipartUpload');
    };
    crashing.stat = async () => {
      throw new Error('worker lost');
    };
    useObjectStorage(crashing);
    try {
      await expect(runImport(importId)).rejects.toThrow('worker lost');
    } finally {
      useObjectStorage(inner);
    }
    expect(await rowOf(importId)).toMatchObject({ status: 'failed', sha256: null, copiedBytes: BYTES.length });
    const recording = recordingReads();
    try {
      expectData(await invoke(routes.retryImport, { ...asOwner(s), path: flow.pathOf(s, importId) }), 202);
      await drainLocalImports();
    } finally {
      recording.restore();
    }

    const done = await rowOf(importId);
    expect(done).toMatchObject({ status: 'succeeded', sha256: sha256(TEXT), copyUploadId: null });
    expect(await emailCount(s.caseId)).toBe(MESSAGES);
    // Read segment by segment, each checked (read whole) and then imported: twice each.
    const evidenceReads = recording.reads.filter((read) => read.key === done.objectKey);
    expect(evidenceReads).toHaveLength(2 * SEGMENTS);
    for (const read of evidenceReads) expect(read.options.version).toBe(done.evidenceVersion);
  });

  it('an upload replaced between two segments fails UPLOAD_CHANGED: nothing becomes evidence, the copy is abandoned', async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    expect(await runImport(importId, pauseEveryTime)).toBe('paused');
    const paused = await rowOf(importId);
    // What S3 would do with a PUT through the still-valid presigned link.
    await objectStorage().put(
      paused.stagingKey!,
      Buffer.from(TEXT.replace('Copied 5', 'Forged 5')),
      'application/mbox',
    );

    expect(await runImport(importId, pauseEveryTime)).toBe('failed');

    const failed = await rowOf(importId);
    expect(failed).toMatchObject({
      status: 'failed',
      errorCode: 'UPLOAD_CHANGED',
      sha256: null,
      copyUploadId: null,
      copiedBytes: 0,
      copyHashState: null,
    });
    expect(await segmentsOf(importId)).toEqual([]);
    expect(await objectStorage().listParts(paused.objectKey, paused.copyUploadId!)).toBeNull();
    expect(await objectStorage().size(paused.objectKey)).toBeNull();
    expect(await emailCount(s.caseId)).toBe(0);
  });

  it('cancel while paused mid-copy aborts the copy: nothing becomes evidence', async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    expect(await runImport(importId, pauseEveryTime)).toBe('paused');
    const paused = await rowOf(importId);
    expect(await objectStorage().listParts(paused.objectKey, paused.copyUploadId!)).toHaveLength(1);

    expectData(await invoke(routes.cancelImport, { ...asOwner(s), path: flow.pathOf(s, importId) }));

    await expect.poll(() => objectStorage().listParts(paused.objectKey, paused.copyUploadId!)).toBeNull();
    expect(await runImport(importId)).toBe('skipped');
    expect(await objectStorage().size(paused.objectKey)).toBeNull();
  });
});

describe('later runs check what they read, segment by segment', () => {
  /** An import copied in segments and paused after `items` one-message batches. */
  async function pausedAfterCopy(s: Setup, items: number) {
    const importId = await startedWithoutWorker(s);
    expect(await runImport(importId, { batchSize: 1, shouldPause: () => false })).toBe('finished');
    // Rewound: as if it had paused after `items` messages (the emails stay; re-imports are skipped by Message-ID).
    const offset = TEXT.indexOf(mboxMessage(`c${items}`, `Copied ${items}`));
    await db()
      .update(evidenceImports)
      .set({ status: 'queued', bytesRead: offset, itemsRead: items, finishedAt: null })
      .where(eq(evidenceImports.id, importId));
    return { importId, offset };
  }

  it('a resumed run hashes only the segments from its checkpoint on, each before importing from it', async () => {
    const s = await caseWithOwner();
    const { importId, offset } = await pausedAfterCopy(s, 4);
    const row = await rowOf(importId);
    const recording = recordingReads();
    try {
      expect(await runImport(importId)).toBe('finished');
    } finally {
      recording.restore();
    }

    const evidenceReads = recording.reads.filter((read) => read.key === row.objectKey);
    const firstSegment = Math.floor(offset / SEGMENT);
    // Never the whole file: each read is one segment's, none before the checkpoint's segment.
    expect(evidenceReads.length).toBeGreaterThan(0);
    for (const read of evidenceReads) {
      expect(read.options.version).toBe(row.evidenceVersion);
      expect(read.options.start).toBeGreaterThanOrEqual(firstSegment * SEGMENT);
      expect(read.options.end! - read.options.start!).toBeLessThanOrEqual(SEGMENT);
    }
    // Each segment read whole (checked), then from the checkpoint on (imported).
    expect(evidenceReads[0]!.options).toMatchObject({ start: firstSegment * SEGMENT });
    expect(evidenceReads[1]!.options).toMatchObject({ start: offset });
    expect(await rowOf(importId)).toMatchObject({ status: 'succeeded', itemsRead: MESSAGES });
  });

  it('a segment that no longer hashes to what was copied fails UPLOAD_CHANGED before any of its bytes is imported', async () => {
    const s = await caseWithOwner();
    const { importId, offset } = await pausedAfterCopy(s, 4);
    // The recorded hash of the next segment to be read no longer matches its bytes: the same as
    // evidence altered in place (the test cannot rewrite a pinned version).
    const segment = Math.floor(offset / SEGMENT);
    await db()
      .update(evidenceImportSegments)
      .set({ sha256: sha256('something else') })
      .where(and(eq(evidenceImportSegments.importId, importId), eq(evidenceImportSegments.segment, segment)));
    await db().delete(emails).where(eq(emails.caseId, s.caseId));

    expect(await runImport(importId)).toBe('failed');

    const failed = await flow.read(s, importId);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'UPLOAD_CHANGED' } });
    expect(failed.error.message).toContain(sha256(TEXT));
    expect(await emailCount(s.caseId)).toBe(0);
  });
});
