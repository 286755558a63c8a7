import { createHash } from 'node:crypto';
import { and, asc, desc, eq, gt, inArray, lte } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { generatedDocuments } from '../db/schema/storage';
import { newId } from '../ids';
import { objectStorage } from './configured-storage';
import { GENERATED_PREFIX } from './keys';

/** How long a generated document is kept (and reused): a week, then maintenance removes it. */
export const GENERATED_DOCUMENT_SECONDS = 7 * 24 * 60 * 60;
/** Documents removed per batch: one read, at most this many object deletions, one delete. */
const BATCH = 100;
/** Batches per maintenance run, so one run stays short; what is left waits for the next run. */
const MAX_BATCHES = 20;
/** Object deletions in flight at once. */
const CONCURRENT_DELETES = 8;

/** What a document is, and so where it is kept under GENERATED_PREFIX. */
export type GeneratedDocumentKind = 'custody' | 'billing-report';

export interface GeneratedDocumentRequest {
  organizationId: string;
  /** The case a custody document is about; null for an organization's billing report. */
  caseId: string | null;
  kind: GeneratedDocumentKind;
  /**
   * What the document covers, as text (the caller's parameters and the newest state it reads, such
   * as the case's last audit event): a document made for the same text is reused until it expires.
   */
  covers: string;
  fileName: string;
  contentType: string;
  /** A reused document must still exist this long (the download link handed out with it). */
  linkSeconds: number;
  /** Makes the document, with what its answer says about it besides the key (counts, heads). */
  render(): Promise<{ bytes: Uint8Array; details: Record<string, unknown> }>;
}

export interface GeneratedDocument {
  id: string;
  objectKey: string;
  bytes: number;
  fileName: string;
  details: Record<string, unknown>;
  createdAt: Date;
  expiresAt: Date;
  /** true when an earlier request's document is handed out again. */
  reused: boolean;
}

function keyOf(request: GeneratedDocumentRequest, id: string): string {
  if (request.kind === 'custody') {
    if (!request.caseId) throw new Error('A custody document is about a case');
    return `${GENERATED_PREFIX}cases/${request.caseId}/custody/${id}/${request.fileName}`;
  }
  return `${GENERATED_PREFIX}organizations/${request.organizationId}/reports/${id}/${request.fileName}`;
}

const fingerprintOf = (request: GeneratedDocumentRequest) =>
  createHash('sha256')
    .update(`${request.kind}\n${request.caseId ?? ''}\n${request.covers}`)
    .digest('hex');

/**
 * The organization's document covering `request.covers`: one made earlier and still kept for at
 * least the link's life is handed out again (nothing rendered, nothing stored); otherwise the
 * document is rendered, stored under GENERATED_PREFIX (outside the evidence location and its
 * Object Lock) and recorded for a week, counting in the organization's storage from then until
 * maintenance removes it. Not refused at the storage cap: a custody record or a billing report is
 * never withheld for lack of room; what it keeps counts against later uploads.
 *
 * The object is stored before its row is written: a row always names an object that is there (a
 * reused document is never missing), and a failure between the two leaves an object no row
 * names, which the cloud's lifecycle rule on the prefix removes. Two requests racing for the same
 * new document may each store one; both count and both expire.
 */
export async function generatedDocument(request: GeneratedDocumentRequest): Promise<GeneratedDocument> {
  const fingerprint = fingerprintOf(request);
  const at = now();
  const [kept] = await db()
    .select()
    .from(generatedDocuments)
    .where(
      and(
        eq(generatedDocuments.organizationId, request.organizationId),
        eq(generatedDocuments.fingerprint, fingerprint),
        gt(generatedDocuments.expiresAt, addSeconds(at, request.linkSeconds)),
      ),
    )
    .orderBy(desc(generatedDocuments.createdAt))
    .limit(1);
  if (kept)
    return {
      id: kept.id,
      objectKey: kept.objectKey,
      bytes: kept.bytes,
      fileName: String(kept.details.fileName ?? request.fileName),
      details: kept.details,
      createdAt: kept.createdAt,
      expiresAt: kept.expiresAt,
      reused: true,
    };

  const { bytes, details } = await request.render();
  const id = newId();
  const objectKey = keyOf(request, id);
  await objectStorage().put(objectKey, bytes, request.contentType);
  const row = {
    id,
    organizationId: request.organizationId,
    caseId: request.caseId,
    kind: request.kind,
    objectKey,
    bytes: bytes.byteLength,
    fingerprint,
    details: { ...details, fileName: request.fileName },
    createdAt: at,
    expiresAt: addSeconds(at, GENERATED_DOCUMENT_SECONDS),
  };
  await db().insert(generatedDocuments).values(row);
  return { ...row, fileName: request.fileName, reused: false };
}

/**
 * Removes the generated documents past their expiry, in bounded batches: each object, then the
 * rows, so a document counts in storage until its object is gone (a failed deletion leaves the row
 * for the next run). Returns how many documents were removed.
 */
export async function removeExpiredDocuments(): Promise<number> {
  const storage = objectStorage();
  let removed = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
    const expired = await db()
      .select({ id: generatedDocuments.id, objectKey: generatedDocuments.objectKey })
      .from(generatedDocuments)
      .where(lte(generatedDocuments.expiresAt, now()))
      .orderBy(asc(generatedDocuments.expiresAt))
      .limit(BATCH);
    if (expired.length === 0) break;
    for (let next = 0; next < expired.length; next += CONCURRENT_DELETES)
      await Promise.all(
        expired.slice(next, next + CONCURRENT_DELETES).map((document) => storage.delete(document.objectKey)),
      );
    await db()
      .delete(generatedDocuments)
      .where(
        inArray(
          generatedDocuments.id,
          expired.map((document) => document.id),
        ),
      );
    removed += expired.length;
    if (expired.length < BATCH) break;
  }
  return removed;
}
