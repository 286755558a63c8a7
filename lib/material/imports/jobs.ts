import { and, count, desc, eq, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { CreateImportDto, CreateImportResponseEntity, ImportEntity } from '../../../schemas/material/imports';
import { recordAudit } from '../../audit/record';
import type { Actor } from '../../auth/actor';
import type { CaseContext } from '../../cases/context';
import { countStoredBytes, uncountObjectBytes } from '../../cases/stored-bytes';
import { addSeconds, now } from '../../clock';
import { db } from '../../db/client';
import { evidenceImports } from '../../db/schema/material';
import { storageReservations } from '../../db/schema/organizations';
import { transaction } from '../../db/transaction';
import { newId } from '../../ids';
import type { OrganizationContext } from '../../organizations/context';
import { assertStorageFits, lockAllowances, releasingReservations } from '../../organizations/allowances';
import { type PagingInput, pageWindow, toPage } from '../../paging';
import { objectStorage } from '../../storage/configured-storage';
import { casePrefix, stagingKeyOf } from '../../storage/keys';
import { MAX_SINGLE_UPLOAD_BYTES } from '../../../schemas/material/imports';
import {
  ImportAlreadyStartedError,
  ImportNotCancellableError,
  ImportNotFailedError,
  ImportNotRetryableError,
  UploadIncompleteError,
} from '../errors';
import { keySafe, reserveUploadStorage, UPLOAD_LINK_SECONDS } from '../uploads';
import { findImport, type ImportRow } from './find';
import { completeImportUpload, MULTIPART_UPLOAD_SECONDS, partPlan, partsUrlOf } from './multipart';
import { enqueueImport, enqueueNextImport } from './queue';

export type { ImportRow };

/**
 * Runs of one import that may end without finishing (its worker lost: out of memory, killed, timed
 * out; or an unexpected error) before it is failed for good with ATTEMPTS_EXHAUSTED: a file that
 * kills every worker that reads it must not hold a worker slot forever. Pausing at a checkpoint (a
 * worker out of time, by design) is not an attempt.
 */
export const MAX_IMPORT_ATTEMPTS = 3;

type ImportAnswer = z.output<typeof ImportEntity>;

interface CaseRequest {
  organization: OrganizationContext;
  caseContext: CaseContext;
}

/** An import as the API answers it: its progress from the committed checkpoint. */
export function importEntity(row: ImportRow): ImportAnswer {
  const succeeded = row.status === 'succeeded';
  const bytesRead = succeeded ? row.sizeBytes : Math.min(row.bytesRead, row.sizeBytes);
  return {
    id: row.id,
    caseId: row.caseId,
    kind: row.kind,
    fileName: row.fileName,
    contentType: row.contentType,
    sizeBytes: row.sizeBytes,
    profile: row.profile,
    sha256: row.sha256,
    status: row.status,
    progress: {
      bytesRead,
      totalBytes: row.sizeBytes,
      itemsRead: row.itemsRead,
      itemsImported: row.itemsImported,
      itemsSkipped: row.itemsSkipped,
      percent: succeeded ? 100 : Math.floor((bytesRead * 100) / row.sizeBytes),
    },
    error: row.errorCode
      ? {
          code: row.errorCode,
          message: row.errorMessage ?? '',
          ...(row.errorItemIndex === null ? {} : { itemIndex: row.errorItemIndex }),
        }
      : null,
    createdBy: row.createdById,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

/**
 * POST /cases/{caseId}/imports: records the import (awaiting its upload) and hands out one signed
 * PUT link for the file, to its staging key (`staging/cases/<caseId>/imports/<importId>-<name>`);
 * the worker later copies what was uploaded into the evidence key (`cases/<caseId>/imports/...`),
 * which no link covers. The declared size is reserved in the plan's storage until the link expires
 * or the import starts (403 STORAGE_LIMIT_REACHED when it does not fit), as upload links for note
 * attachments are. A file over 5 GiB (or any, when the client asks `upload: 'multipart'`) is sent
 * in parts instead: a multipart upload of the staging key is opened and the answer gives the part
 * size and count and the route that signs part links on demand (multipart.ts).
 */
export async function createImport(
  ctx: CaseRequest & { actor: Actor },
  input: z.output<typeof CreateImportDto>,
): Promise<z.output<typeof CreateImportResponseEntity>> {
  const { organization } = ctx;
  const caseId = ctx.caseContext.case.id;
  const id = newId();
  const objectKey = `${casePrefix(caseId)}imports/${id}-${keySafe(input.fileName)}`;
  const stagingKey = stagingKeyOf(objectKey);
  const multipart = input.sizeBytes > MAX_SINGLE_UPLOAD_BYTES || input.upload === 'multipart';
  const expiresAt = addSeconds(now(), multipart ? MULTIPART_UPLOAD_SECONDS : UPLOAD_LINK_SECONDS);
  // Opened before the row, so an import never names an upload that does not exist; one whose row
  // then fails to commit is left to the staging prefix's clean-up (lifecycle rule, maintenance).
  const multipartUploadId = multipart
    ? await objectStorage().createMultipartUpload(stagingKey, input.contentType)
    : null;
  const row = await transaction(async (tx) => {
    await reserveUploadStorage(tx, organization.id, caseId, [{ key: stagingKey, size: input.sizeBytes }], expiresAt);
    const [created] = await tx
      .insert(evidenceImports)
      .values({
        id,
        organizationId: organization.id,
        caseId,
        kind: input.kind,
        fileName: input.fileName,
        contentType: input.contentType,
        sizeBytes: input.sizeBytes,
        // A profile only names where network messages and tickets go; an email import has none.
        profile: input.kind === 'email' ? null : input.profile,
        objectKey,
        stagingKey,
        multipartUploadId,
        createdById: ctx.actor.user.id,
      })
      .returning();
    recordAudit(tx, {
      action: 'evidence.import.created',
      organizationId: organization.id,
      caseId,
      target: { type: 'import', id },
      metadata: {
        kind: input.kind,
        fileName: input.fileName,
        sizeBytes: input.sizeBytes,
        key: objectKey,
        upload: multipart ? 'multipart' : 'single',
      },
    });
    return created!;
  });
  if (multipart)
    return {
      import: importEntity(row),
      upload: {
        method: 'MULTIPART',
        ...partPlan(input.sizeBytes),
        partsUrl: partsUrlOf(caseId, id),
        expiresAt: expiresAt.toISOString(),
      },
    };
  const url = await objectStorage().uploadUrl(
    stagingKey,
    { contentType: input.contentType, size: input.sizeBytes },
    UPLOAD_LINK_SECONDS,
  );
  return {
    import: importEntity(row),
    upload: {
      method: 'PUT',
      url,
      // Both are signed into an S3 link: a link for N bytes stores exactly N.
      headers: { 'content-type': input.contentType, 'content-length': String(input.sizeBytes) },
      expiresAt: expiresAt.toISOString(),
    },
  };
}

/** Where the import's upload link stores its file (imports created before staging: the evidence key itself). */
const uploadKeyOf = (row: ImportRow) => row.stagingKey ?? row.objectKey;

/**
 * POST /cases/{caseId}/imports/{importId}/start: once the whole file is stored (its size as
 * declared, else 409 UPLOAD_INCOMPLETE), the import is queued for the worker (202) and its file
 * becomes the case's source evidence: its size moves from the link's reservation into the case's
 * storage, under the allowance lock (403 STORAGE_LIMIT_REACHED if the reservation lapsed and the
 * file no longer fits). The version of the upload is recorded: the worker copies only those bytes
 * into evidence (UPLOAD_CHANGED if the link stored anything since), and the link is sealed (the
 * local store refuses later PUTs; S3's link can only change what no one reads). Starting twice is
 * 409 IMPORT_ALREADY_STARTED, concurrent starts included. A file sent in parts is first completed
 * from them (every part at its size, else 409 UPLOAD_INCOMPLETE naming the missing ones). The
 * worker is told after the commit; if that fails the import stays queued for maintenance.
 */
export async function startImport(ctx: CaseRequest, importId: string): Promise<ImportAnswer> {
  const caseId = ctx.caseContext.case.id;
  const found = await findImport(caseId, importId);
  if (found.status !== 'awaiting_upload') throw new ImportAlreadyStartedError(found.status);
  const uploadKey = uploadKeyOf(found);
  const storage = objectStorage();
  // A file sent in parts becomes one object here (409 UPLOAD_INCOMPLETE naming missing parts).
  if (found.multipartUploadId) await completeImportUpload({ ...found, multipartUploadId: found.multipartUploadId });
  const stored = await storage.stat(uploadKey);
  if (stored?.size !== found.sizeBytes) throw new UploadIncompleteError(found.sizeBytes, stored?.size ?? null);
  const row = await transaction(async (tx, afterCommit) => {
    // Lock order as everywhere: the plan row, then the case row, then the import.
    const usage = await lockAllowances(tx, ctx.organization.id);
    const [queued] = await tx
      .update(evidenceImports)
      .set({ status: 'queued', queuedAt: now(), stagedVersion: stored.version })
      .where(and(eq(evidenceImports.id, found.id), eq(evidenceImports.status, 'awaiting_upload')))
      .returning();
    if (!queued) throw new ImportAlreadyStartedError('already queued');
    const released = await tx
      .delete(storageReservations)
      .where(
        and(eq(storageReservations.organizationId, ctx.organization.id), eq(storageReservations.objectKey, uploadKey)),
      )
      .returning({ bytes: storageReservations.bytes });
    // Every reservation counts until it is taken over or its upload removed, lapsed or not.
    const reserved = released.reduce((sum, reservation) => sum + reservation.bytes, 0);
    assertStorageFits(releasingReservations(usage, reserved), found.sizeBytes);
    await countStoredBytes(tx, caseId, { objectBytes: found.sizeBytes });
    recordAudit(tx, {
      action: 'evidence.import.started',
      organizationId: ctx.organization.id,
      caseId,
      target: { type: 'import', id: found.id },
      metadata: { kind: found.kind, fileName: found.fileName, sizeBytes: found.sizeBytes },
    });
    if (found.stagingKey) afterCommit(() => storage.seal(uploadKey));
    afterCommit(() => enqueueImport(found.id));
    return queued;
  });
  return importEntity(row);
}

/**
 * POST /cases/{caseId}/imports/{importId}/retry: a failed import is queued again (202) and resumes
 * from its last committed batch; what is already in is skipped by the items' own keys, and the
 * worker first re-checks the stored file's SHA-256 (UPLOAD_CHANGED on any difference). Any other
 * state is 409 IMPORT_NOT_FAILED; one whose attempts are spent is 409 IMPORT_NOT_RETRYABLE.
 */
export async function retryImport(ctx: CaseRequest, importId: string): Promise<ImportAnswer> {
  const caseId = ctx.caseContext.case.id;
  const found = await findImport(caseId, importId);
  if (found.status === 'failed' && found.attempts >= MAX_IMPORT_ATTEMPTS)
    throw new ImportNotRetryableError(found.attempts);
  const row = await transaction(async (tx, afterCommit) => {
    const [queued] = await tx
      .update(evidenceImports)
      .set({
        status: 'queued',
        queuedAt: now(),
        errorCode: null,
        errorMessage: null,
        errorItemIndex: null,
        finishedAt: null,
      })
      .where(
        and(
          eq(evidenceImports.id, found.id),
          eq(evidenceImports.status, 'failed'),
          sql`${evidenceImports.attempts} < ${MAX_IMPORT_ATTEMPTS}`,
        ),
      )
      .returning();
    if (!queued) throw new ImportNotFailedError(found.status);
    recordAudit(tx, {
      action: 'evidence.import.retried',
      organizationId: ctx.organization.id,
      caseId,
      target: { type: 'import', id: found.id },
      metadata: { fromItem: found.itemsRead, fromByte: found.bytesRead, previousError: found.errorCode },
    });
    afterCommit(() => enqueueImport(found.id));
    return queued;
  });
  return importEntity(row);
}

/**
 * POST /cases/{caseId}/imports/{importId}/cancel: ends an import that has not ended (awaiting its
 * upload, queued, running or failed): it is `cancelled` and never run again. What it imported stays
 * (evidence is append-only), and so does its file once it became evidence; a file that never did
 * (not yet copied by the worker) stops counting, and an upload link's reservation is released.
 * The link is sealed. A running worker stops at its next batch without committing it; the
 * organization's next queued import then takes its turn. A succeeded or cancelled import is 409
 * IMPORT_NOT_CANCELLABLE.
 */
export async function cancelImport(ctx: CaseRequest, importId: string): Promise<ImportAnswer> {
  const caseId = ctx.caseContext.case.id;
  const found = await findImport(caseId, importId);
  const uploadKey = uploadKeyOf(found);
  const storage = objectStorage();
  const row = await transaction(async (tx, afterCommit) => {
    // Locked first, so the state it is cancelled from is the one decided on (a worker may be ending it).
    const [current] = await tx.select().from(evidenceImports).where(eq(evidenceImports.id, found.id)).for('update');
    if (!current || !CANCELLABLE.includes(current.status)) throw new ImportNotCancellableError(current?.status ?? '');
    const [cancelled] = await tx
      .update(evidenceImports)
      .set({ status: 'cancelled', leaseUntil: null, finishedAt: now() })
      .where(eq(evidenceImports.id, found.id))
      .returning();
    // Counted at start, but never copied into evidence and no worker copying it now: nothing is kept.
    const neverKept = current.sha256 === null && (current.status === 'queued' || current.status === 'failed');
    if (neverKept) await uncountObjectBytes(tx, caseId, current.sizeBytes);
    await tx
      .delete(storageReservations)
      .where(
        and(eq(storageReservations.organizationId, ctx.organization.id), eq(storageReservations.objectKey, uploadKey)),
      );
    recordAudit(tx, {
      action: 'evidence.import.cancelled',
      organizationId: ctx.organization.id,
      caseId,
      target: { type: 'import', id: found.id },
      metadata: {
        from: current.status,
        itemsRead: current.itemsRead,
        itemsImported: current.itemsImported,
        fileKept: !neverKept && current.status !== 'awaiting_upload',
      },
    });
    afterCommit(() => storage.seal(uploadKey));
    // Parts still waiting are removed (S3 keeps, and bills, an open upload's parts until aborted).
    if (current.status === 'awaiting_upload' && current.multipartUploadId) {
      const uploadId = current.multipartUploadId;
      afterCommit(() => storage.abortMultipartUpload(uploadKey, uploadId));
    }
    // A copy into evidence paused or failed midway never becomes evidence (a running worker aborts its own).
    if ((current.status === 'queued' || current.status === 'failed') && current.copyUploadId) {
      const copyUploadId = current.copyUploadId;
      afterCommit(() => storage.abortMultipartUpload(current.objectKey, copyUploadId));
    }
    // The upload is not evidence (the evidence copy, when made, has its own key).
    if (found.stagingKey && current.status !== 'running') afterCommit(() => storage.delete(uploadKey));
    if (current.status === 'queued' || current.status === 'running')
      afterCommit(() => enqueueNextImport(ctx.organization.id));
    return cancelled!;
  });
  return importEntity(row);
}

/** The states cancel ends; succeeded and cancelled imports have ended already. */
const CANCELLABLE: ReadonlyArray<ImportRow['status']> = ['awaiting_upload', 'queued', 'running', 'failed'];

/** GET /cases/{caseId}/imports/{importId}. */
export async function getImport(ctx: CaseRequest, importId: string): Promise<ImportAnswer> {
  return importEntity(await findImport(ctx.caseContext.case.id, importId));
}

/** GET /cases/{caseId}/imports: the case's imports, newest first. */
export async function listImports(ctx: CaseRequest, paging: PagingInput) {
  const caseId = ctx.caseContext.case.id;
  const window = pageWindow(paging, 20);
  const [rows, [total]] = await Promise.all([
    db()
      .select()
      .from(evidenceImports)
      .where(eq(evidenceImports.caseId, caseId))
      .orderBy(desc(evidenceImports.createdAt), desc(evidenceImports.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ n: count() }).from(evidenceImports).where(eq(evidenceImports.caseId, caseId)),
  ]);
  return toPage(window, total?.n ?? 0, rows.map(importEntity));
}
