import { isAbsolute } from 'node:path';

/**
 * Where a case's evidence objects live (email importer, device-note attachments and their upload
 * links); the cloud grants storage functions this layout (infra/permissions.ts).
 */
export const casePrefix = (caseId: string) => `cases/${caseId}/`;

/**
 * Where upload links put files (`staging/cases/<caseId>/...`): a location the links cover and
 * nothing reads as evidence. Starting an import (or importing device notes) copies the verified
 * bytes out of it into the case's evidence location (casePrefix), which no link covers; what is
 * left here is removed (the maintenance job locally, a lifecycle rule in the cloud).
 */
export const STAGING_PREFIX = 'staging/';
/**
 * Days the cloud's lifecycle rule keeps a staging object (infra/constructs/object-store.ts): a
 * backstop only. The service removes every staging object it knows of itself (the worker once it
 * copied the upload into evidence, cancel, maintenance for uploads never started), so the figure
 * is set by how long a started import may wait its organization's turn before its upload is
 * copied: 30 days, with maintenance reporting a wait nearing it (IMPORT_WAIT_ALERT_DAYS).
 */
export const STAGING_EXPIRATION_DAYS = 30;
export const caseStagingPrefix = (caseId: string) => `${STAGING_PREFIX}${casePrefix(caseId)}`;
/** The staging key an upload link writes for the evidence key it will become. */
export const stagingKeyOf = (evidenceKey: string) => `${STAGING_PREFIX}${evidenceKey}`;

/**
 * Where generated documents live (custody and report PDFs): outside the evidence location and its
 * Object Lock, removed once they expire.
 */
export const GENERATED_PREFIX = 'generated/';

/**
 * Where answers too large for Lambda's payload limit wait for their client (lib/storage/answers.ts):
 * minutes, then removed (the work bucket's lifecycle rule, maintenance locally).
 */
export const ANSWER_PREFIX = 'answers/';

/**
 * Keys the cloud keeps in the work bucket (staging uploads, generated documents), every other key
 * in the evidence bucket. The evidence bucket's Object Lock is a default retention of the whole
 * bucket (7 years, compliance mode, in prod), so nothing written there can be removed; what must
 * expire lives in a bucket without it. The stack grants each prefix on its bucket by the same rule
 * (infra/constructs/object-store.ts).
 */
export const WORK_BUCKET_PREFIXES: readonly string[] = [STAGING_PREFIX, GENERATED_PREFIX, ANSWER_PREFIX];

export function isWorkBucketKey(key: string): boolean {
  return WORK_BUCKET_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** Longest object key accepted (S3's limit is 1,024 bytes). */
const MAX_KEY_LENGTH = 1024;

/**
 * Whether `key` is a plain relative object key: segments separated by '/', none empty, '.' or
 * '..', no backslash, no NUL or other control character, not absolute. Checked segment by segment
 * rather than by comparing normalized path prefixes, which `../objects_sibling/x` passes.
 */
export function isSafeObjectKey(key: string): boolean {
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key) > MAX_KEY_LENGTH) return false;
  // Backslashes are separators on Windows; control characters (NUL included) have no business in a key.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (key.includes('\\') || /[\u0000-\u001f\u007f]/.test(key) || key.startsWith('/') || isAbsolute(key)) return false;
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

export function assertSafeObjectKey(key: string): void {
  if (!isSafeObjectKey(key))
    throw new Error('Invalid object key: it must be a relative path of non-empty segments other than . and ..');
}
