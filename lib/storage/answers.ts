import { randomUUID } from 'node:crypto';
import { addSeconds, now } from '../clock';
import { objectStorage } from './configured-storage';
import { DirectoryStorage } from './directory-storage';
import { ANSWER_PREFIX } from './keys';

/**
 * How long the link of a stored answer works: the client follows the 303 at once, so minutes are
 * plenty, and the object is gone by the next day (the lifecycle rule on ANSWER_PREFIX).
 */
export const ANSWER_LINK_SECONDS = 300;

/** The name ending of a stored answer by its encoding: what the local server serves its type and encoding by. */
const SUFFIX: Record<string, string> = { gzip: '.json.gz', br: '.json.br' };

export interface StoredAnswerLink {
  key: string;
  url: string;
  expiresAt: Date;
}

/**
 * Stores an answer too large for Lambda's payload limit, exactly as it would have been sent (the
 * envelope, compressed with `contentEncoding` when the client accepted one), under ANSWER_PREFIX
 * in the work bucket, and returns a signed link of ANSWER_LINK_SECONDS to it
 * (`answers/<date>/<uuid>.json[.gz|.br]`: the date lets a reader see what is stale at a glance).
 */
export async function storeAnswer(body: Uint8Array, contentEncoding: string | undefined): Promise<StoredAnswerLink> {
  const at = now();
  const suffix = (contentEncoding && SUFFIX[contentEncoding]) ?? '.json';
  const key = `${ANSWER_PREFIX}${at.toISOString().slice(0, 10)}/${randomUUID()}${suffix}`;
  const storage = objectStorage();
  await storage.put(key, body, 'application/json', {
    ...(contentEncoding ? { contentEncoding } : {}),
    cacheControl: 'private, no-store',
  });
  const url = await storage.downloadUrl(key, ANSWER_LINK_SECONDS);
  return { key, url, expiresAt: addSeconds(at, ANSWER_LINK_SECONDS) };
}

/**
 * Maintenance, local store only: removes stored answers whose link has expired (in the cloud the
 * work bucket's lifecycle rule removes them after a day). Returns how many were removed.
 */
export async function removeExpiredAnswers(): Promise<number> {
  const storage = objectStorage();
  if (!(storage instanceof DirectoryStorage)) return 0;
  return storage.removeWrittenBefore(ANSWER_PREFIX, addSeconds(now(), -ANSWER_LINK_SECONDS));
}
