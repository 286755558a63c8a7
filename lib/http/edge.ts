import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { config } from '../config';
import { logger } from '../log';
import { ForbiddenError } from './errors';
import type { ApiEvent } from './types';

/**
 * The service behind its edge (infra/constructs/edge.ts): CloudFront with AWS WAF in front of the
 * HTTP API. There API Gateway's `sourceIp` is a CloudFront server, shared by every client that
 * server serves, so the client is the viewer CloudFront names in CloudFront-Viewer-Address, and
 * only requests that CloudFront forwarded (carrying the secret x-origin-verify value) are served:
 * nobody can call the origin domain directly with a viewer address of their choosing.
 */

/** The header CloudFront adds to every origin request, with the value of ORIGIN_VERIFY_SECRET. */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';
/** The viewer's IP and source port, as CloudFront saw the connection (never a client's header). */
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

/**
 * The origin-verify value when the service runs behind the edge, else undefined. In the cloud it
 * is read from Secrets Manager with the other secrets before the first request is checked, and
 * again past its time-to-live (lib/aws/secrets.ts), so a value rotated by hand reaches warm functions.
 */
export async function originVerifyValue(): Promise<string | undefined> {
  if (config().ORIGIN_VERIFY_SECRET_ARN) await (await import('../aws/secrets')).loadCloudSecrets();
  const value = config().ORIGIN_VERIFY_SECRET;
  if (!value && config().ORIGIN_VERIFY_SECRET_ARN) throw new Error('The origin-verify secret is empty');
  return value;
}

/** Whether the offered value is the expected one, in a time that does not depend on where they differ. */
export function sameSecret(offered: string | undefined, expected: string): boolean {
  if (offered === undefined) return false;
  // Digests have one length whatever was offered, which timingSafeEqual needs.
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(offered), digest(expected));
}

/**
 * The IP of CloudFront-Viewer-Address, which is `ip:port`: `198.51.100.10:46532`, an IPv6 address
 * without brackets (`2001:db8::1:46532`, the last group is the port) or with them
 * (`[2001:db8::1]:46532`). A bare IPv4 address is accepted too. Undefined when unreadable.
 */
export function viewerIp(header: string | undefined): string | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(value);
  const candidate = bracketed ? bracketed[1]! : isIP(value) === 4 ? value : value.replace(/:\d{1,5}$/, '');
  return isIP(candidate) === 0 ? undefined : candidate.toLowerCase();
}

/**
 * The client IP of a request forwarded by the edge: 403 FORBIDDEN without the matching
 * x-origin-verify header; the viewer's address otherwise (X-Forwarded-For is never read: a client
 * can send any). The header is taken out of the event, so no handler or log line sees it.
 */
export function edgeClientIp(event: ApiEvent, expected: string): string {
  const headers = event.headers ?? {};
  const verified = sameSecret(headers[ORIGIN_VERIFY_HEADER], expected);
  delete headers[ORIGIN_VERIFY_HEADER];
  if (!verified) throw new ForbiddenError('Requests are served only through the public address of the API');
  const ip = viewerIp(headers[VIEWER_ADDRESS_HEADER]);
  if (ip) return ip;
  // CloudFront always sends it (the origin request policy asks for it): missing means a changed
  // policy, and every such request then shares one anonymous limit. Say so in the logs.
  logger.warn('request without a readable CloudFront-Viewer-Address', { value: headers[VIEWER_ADDRESS_HEADER] });
  return 'unknown';
}
