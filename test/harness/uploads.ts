import { createHash } from 'node:crypto';

/**
 * The Content-MD5 header of a body (base64 of its MD5): every PUT through an upload link sends
 * it, as the cloud bucket's Object Lock requires and the local upload route does too (issue 29).
 */
export const contentMd5 = (body: string | Uint8Array): string => createHash('md5').update(body).digest('base64');

/** The link's signed headers plus the body's Content-MD5: what a client sends with its PUT. */
export const uploadHeaders = (signed: Record<string, string>, body: string | Uint8Array): Record<string, string> => ({
  ...signed,
  'content-md5': contentMd5(body),
});
