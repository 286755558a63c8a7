import { addSeconds, now } from '../clock';
import { assertCaseRule, caseWithAccess } from '../cases/access';
import { CASE_RULES } from '../cases/rules';
import type { Actor, OrganizationContext } from '../http/types';
import { newId } from '../ids';
import { casePrefix, objectStorage } from '../storage';

/** How long an upload link works: long enough for a large file on a slow line, short enough to leak little. */
export const UPLOAD_LINK_SECONDS = 60 * 60;

/** A file name as the last part of an object key: letters, digits, dot, dash and underscore. */
const keySafe = (name: string) => name.replace(/[^\w.-]+/g, '_').replace(/^\.+/, '_').slice(0, 120) || 'attachment';

/**
 * POST /extraction/case/attachment-uploads?caseId=...: one signed PUT link per file, under the
 * case's prefix (`cases/<caseId>/notes/<id>-<name>`), the only place device-note import accepts
 * attachments from. Needs the import case rule, like the import itself. Nothing is written until
 * the extractor uploads; an unused link simply expires.
 */
export async function createAttachmentUploads(
  organization: OrganizationContext,
  actor: Actor,
  caseId: string,
  input: { files: Array<{ name: string; contentType: string; size: number }> },
) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  assertCaseRule(found, CASE_RULES.import, 'Uploading evidence needs owner or admin access to the case');
  const storage = objectStorage();
  const expiresAt = addSeconds(now(), UPLOAD_LINK_SECONDS).toISOString();
  const uploads = await Promise.all(
    input.files.map(async (file) => {
      const key = `${casePrefix(caseId)}notes/${newId()}-${keySafe(file.name)}`;
      const url = await storage.uploadUrl(key, { contentType: file.contentType, size: file.size }, UPLOAD_LINK_SECONDS);
      return { name: file.name, key, method: 'PUT' as const, url, headers: { 'content-type': file.contentType }, expiresAt };
    }),
  );
  return { uploads };
}
