import type * as z from 'zod/mini';
import type { ImportPartLinksEntity, ImportPartsEntity } from '../../../schemas/material/imports';
import type { CaseContext } from '../../cases/context';
import { addSeconds, now } from '../../clock';
import { config, selfLink } from '../../config';
import { InvalidInputError } from '../../errors';
import { objectStorage } from '../../storage/configured-storage';
import { MAX_PARTS, type UploadedPart } from '../../storage/object-storage';
import { ImportAlreadyStartedError, ImportNotMultipartError, UploadPartsMissingError } from '../errors';
import { UPLOAD_LINK_SECONDS } from '../uploads';
import { findImport, type ImportRow } from './find';

/**
 * Files larger than one PUT (S3: 5 GiB) upload in parts (S3 multipart; the directory store has the
 * same protocol). Parts are at least 64 MiB (S3's floor is 5 MiB; fewer, larger parts mean fewer
 * links to sign and requests to send) and grow by whole MiB so that no file needs more than S3's
 * 10,000 parts: a 5 TiB file goes in 10,000 parts of 525 MiB, well under S3's 5 GiB part ceiling.
 */
export const MIN_PART_BYTES = 64 * 1024 ** 2;

/**
 * How long a file may take to arrive in parts (its reservation's term; each part link still works
 * an hour, signed when asked): a 50 GB export on a 10 Mbit/s line takes about 11 hours. A day, as
 * the work bucket's lifecycle rule aborts an incomplete multipart upload a day after it began.
 */
export const MULTIPART_UPLOAD_SECONDS = 24 * 60 * 60;
const MIB = 1024 ** 2;

export interface PartPlan {
  partSize: number;
  partCount: number;
}

/** How a file of `sizeBytes` is cut: every part `partSize` bytes but the last, the remainder. */
export function partPlan(sizeBytes: number): PartPlan {
  const bySize = Math.max(MIN_PART_BYTES, Math.ceil(sizeBytes / MAX_PARTS / MIB) * MIB);
  // Tests cut small files into a few parts; never so small that the file would need too many.
  const configured = config().IMPORT_MULTIPART_PART_BYTES;
  const partSize =
    configured !== undefined && configured < bySize && Math.ceil(sizeBytes / configured) <= MAX_PARTS
      ? configured
      : bySize;
  return { partSize, partCount: Math.ceil(sizeBytes / partSize) };
}

/** The exact size of part `partNumber` (1-based) of a file of `sizeBytes`. */
export function partSizeOf(sizeBytes: number, plan: PartPlan, partNumber: number): number {
  return partNumber < plan.partCount ? plan.partSize : sizeBytes - plan.partSize * (plan.partCount - 1);
}

/** The parts route of an import, for clients to find it from the create answer. */
export const partsUrlOf = (caseId: string, importId: string) =>
  selfLink(`/cases/${caseId}/imports/${importId}/parts`).toString();

/** An import of the case that is awaiting its upload in parts (404, or 409 when it is not). */
async function awaitingParts(caseId: string, importId: string): Promise<ImportRow & { multipartUploadId: string }> {
  const found = await findImport(caseId, importId);
  if (!found.multipartUploadId) throw new ImportNotMultipartError();
  if (found.status !== 'awaiting_upload') throw new ImportAlreadyStartedError(found.status);
  return found as ImportRow & { multipartUploadId: string };
}

/** Where a multipart import's parts go: its staging key. */
const uploadKeyOf = (row: ImportRow) => row.stagingKey ?? row.objectKey;

/**
 * POST /cases/{caseId}/imports/{importId}/parts: signed PUT links for the parts asked (at most 100
 * a call), each bound to its part number and exact size, with the Content-MD5 rule of single
 * uploads. A part number past the import's last part is 400 naming it.
 */
export async function signImportParts(
  ctx: { caseContext: CaseContext },
  importId: string,
  partNumbers: number[],
): Promise<z.output<typeof ImportPartLinksEntity>> {
  const found = await awaitingParts(ctx.caseContext.case.id, importId);
  const plan = partPlan(found.sizeBytes);
  const beyond = partNumbers.flatMap((partNumber, index) => (partNumber > plan.partCount ? [index] : []));
  if (beyond.length)
    throw new InvalidInputError(
      beyond.slice(0, 20).map((index) => ({
        field: `partNumbers.${index}`,
        message: `Part ${partNumbers[index]} is past the last part: this file has ${plan.partCount}`,
      })),
    );
  const storage = objectStorage();
  const key = uploadKeyOf(found);
  const parts = await Promise.all(
    partNumbers.map(async (partNumber) => {
      const sizeBytes = partSizeOf(found.sizeBytes, plan, partNumber);
      const url = await storage.partUploadUrl(
        key,
        found.multipartUploadId,
        { partNumber, size: sizeBytes },
        UPLOAD_LINK_SECONDS,
      );
      return {
        partNumber,
        sizeBytes,
        method: 'PUT' as const,
        url,
        // Signed into the link: a part link stores exactly its part's bytes.
        headers: { 'content-length': String(sizeBytes) },
      };
    }),
  );
  return { parts, expiresAt: addSeconds(now(), UPLOAD_LINK_SECONDS).toISOString() };
}

/** GET /cases/{caseId}/imports/{importId}/parts: the parts that arrived, so a dropped upload resumes. */
export async function listImportParts(
  ctx: { caseContext: CaseContext },
  importId: string,
): Promise<z.output<typeof ImportPartsEntity>> {
  const found = await awaitingParts(ctx.caseContext.case.id, importId);
  const plan = partPlan(found.sizeBytes);
  const parts = (await objectStorage().listParts(uploadKeyOf(found), found.multipartUploadId)) ?? [];
  return { ...plan, parts };
}

/**
 * At /start: every part arrived at its size (409 UPLOAD_INCOMPLETE naming the others), and the
 * upload is completed into the staging object, which /start then treats as a single upload's.
 */
export async function completeImportUpload(found: ImportRow & { multipartUploadId: string }): Promise<void> {
  const storage = objectStorage();
  const key = uploadKeyOf(found);
  const plan = partPlan(found.sizeBytes);
  const arrived = await storage.listParts(key, found.multipartUploadId);
  // No such upload: completed already by a start that failed after it (the object is there).
  if (arrived === null) return;
  const byNumber = new Map(arrived.map((part) => [part.partNumber, part]));
  const parts: UploadedPart[] = [];
  const missing: number[] = [];
  for (let partNumber = 1; partNumber <= plan.partCount; partNumber++) {
    const part = byNumber.get(partNumber);
    if (part?.sizeBytes === partSizeOf(found.sizeBytes, plan, partNumber)) parts.push(part);
    else missing.push(partNumber);
  }
  if (missing.length) throw new UploadPartsMissingError(missing, plan.partCount);
  await storage.completeMultipartUpload(key, found.multipartUploadId, parts);
}
