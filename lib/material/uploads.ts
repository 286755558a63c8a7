import type * as z from 'zod/mini';
import type { CreateAttachmentUploadsDto } from '../../schemas/material/material';
import { recordAudit } from '../audit/record';
import type { CaseContext } from '../cases/context';
import { addSeconds, now } from '../clock';
import type { Tx } from '../db/client';
import { storageReservations } from '../db/schema/organizations';
import { IMPORT_LIMITS, shortHash } from './importers/limits';
import { transaction } from '../db/transaction';
import { newId } from '../ids';
import type { OrganizationContext } from '../organizations/context';
import { assertStorageFits, lockAllowances } from '../organizations/allowances';
import { objectStorage } from '../storage/configured-storage';
import { casePrefix, stagingKeyOf } from '../storage/keys';

/** How long an upload link works: long enough for a large file on a slow line, short enough to leak little. */
export const UPLOAD_LINK_SECONDS = 60 * 60;

/**
 * A file name as the last part of an object key: letters, digits, dot, dash and underscore (ASCII,
 * so its length is its bytes), at most IMPORT_LIMITS.keyNameChars. A longer name is cut and ends
 * with `~` and a short hash of the whole name (then its extension, when short), so two long names
 * that begin alike still make two keys; the name itself is kept in full where a row records it.
 */
export function keySafe(name: string): string {
  const safe = name.replace(/[^\w.-]+/g, '_').replace(/^\.+/, '_') || 'attachment';
  const max = IMPORT_LIMITS.keyNameChars;
  if (safe.length <= max) return safe;
  const extension = /\.\w{1,10}$/.exec(safe)?.[0] ?? '';
  const suffix = `~${shortHash(name)}${extension}`;
  return `${safe.slice(0, max - suffix.length)}${suffix}`;
}

/**
 * POST /extraction/case/attachment-uploads?caseId=...: one signed PUT link per file. Each file is
 * named by its evidence key under the case's prefix (`cases/<caseId>/notes/<id>-<name>`, the only
 * place device-note import accepts attachments from), but the link writes its staging key
 * (stagingKeyOf): the import copies the upload into the evidence key, which no link covers, so an
 * attachment once imported cannot be replaced. The route has the import case rule, like the import
 * itself.
 *
 * The declared sizes must fit in the plan's storage, counting what the cases hold and what links
 * issued earlier and not yet used or expired promise (403 STORAGE_LIMIT_REACHED otherwise): each
 * link reserves its declared size until it expires or an import links its key. Checked and
 * reserved under the allowance lock, in one transaction, in a fixed number of statements, which
 * also records `evidence.attachment_uploads.created` naming the keys handed out.
 */
export async function createAttachmentUploads(
  ctx: { organization: OrganizationContext; caseContext: CaseContext },
  input: z.output<typeof CreateAttachmentUploadsDto>,
) {
  const { organization } = ctx;
  // The stored id: object keys are built from it (the id sent may differ in letter case).
  const caseId = ctx.caseContext.case.id;
  const at = now();
  const expiresAt = addSeconds(at, UPLOAD_LINK_SECONDS);
  const files = input.files.map((file) => ({
    ...file,
    key: `${casePrefix(caseId)}notes/${newId()}-${keySafe(file.name)}`,
  }));
  const declared = files.reduce((sum, file) => sum + file.size, 0);
  await transaction(async (tx) => {
    await reserveUploadStorage(
      tx,
      organization.id,
      caseId,
      files.map((file) => ({ key: stagingKeyOf(file.key), size: file.size })),
      expiresAt,
    );
    recordAudit(tx, {
      action: 'evidence.attachment_uploads.created',
      organizationId: organization.id,
      caseId,
      metadata: { count: files.length, declaredBytes: declared, keys: files.map((file) => file.key) },
    });
  });
  const storage = objectStorage();
  const uploads = await Promise.all(
    files.map(async (file) => {
      const url = await storage.uploadUrl(
        stagingKeyOf(file.key),
        { contentType: file.contentType, size: file.size },
        UPLOAD_LINK_SECONDS,
      );
      return {
        name: file.name,
        key: file.key,
        method: 'PUT' as const,
        url,
        // Both are signed into an S3 link: the extractor sends exactly the size it declared.
        headers: { 'content-type': file.contentType, 'content-length': String(file.size) },
        expiresAt: expiresAt.toISOString(),
      };
    }),
  );
  return { uploads };
}

/**
 * Reserves the declared sizes of upload links (403 STORAGE_LIMIT_REACHED when they do not fit in
 * the plan's storage, counting what the cases hold and what other links promise): under the
 * allowance lock, in the caller's transaction, in a fixed number of statements. What an import
 * later stores replaces its key's reservation; a reservation whose link lapsed unused keeps
 * counting until maintenance removes its upload (lib/material/lapsed-uploads.ts), since the
 * uploaded object is kept until then.
 */
export async function reserveUploadStorage(
  tx: Tx,
  organizationId: string,
  caseId: string,
  files: ReadonlyArray<{ key: string; size: number }>,
  expiresAt: Date,
): Promise<void> {
  const usage = await lockAllowances(tx, organizationId);
  assertStorageFits(
    usage,
    files.reduce((sum, file) => sum + file.size, 0),
  );
  await tx
    .insert(storageReservations)
    .values(files.map((file) => ({ organizationId, caseId, objectKey: file.key, bytes: file.size, expiresAt })));
}
