import { now } from '../clock';
import { logger } from '../log';
import { lazyRetrying } from '../lazy';
import { answerRequestId, errorResponse } from './error-envelope';
import { LAMBDA_PAYLOAD_BYTES, serializedBytes } from './payload-limits';
import type { ApiMiddleware, ApiRequest } from './types';

// Imported on the first answer too large to send, not at init (issue 35: cold starts).
const answers = lazyRetrying(() => import('../storage/answers'));

/** Headers of the answer that describe its body, which the 303 replaces: not carried over. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-length', 'cache-control']);

/** Left for the store to come back before the answer would be out of time: a 503 then, as the deadline would. */
const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * A body whose result fits whatever its characters: each UTF-16 unit serializes to at most 6 bytes
 * (`\u001f`), and headers and status stay within the 64 KiB kept aside. Most answers stop here,
 * without serializing the result a second time.
 */
const surelyFits = (body: string) => body.length * 6 + 65_536 <= LAMBDA_PAYLOAD_BYTES;

/**
 * The answer as the gateway will carry it: itself when its serialized result fits Lambda's
 * payload limit, else `303 See Other` to a short-lived signed link (lib/storage/answers.ts)
 * holding exactly that answer's body (the envelope, compressed as this client accepted). The 303
 * keeps the answer's other headers (request id, CORS, Idempotent-Replayed) and says in its body
 * where to go, until when, and the status the stored envelope carries. Outermost of the route's
 * own middleware in lib/http/endpoint.ts, so it measures the final result: after compression,
 * the request id and CORS. A failure to store is 503 with Retry-After, never the gateway's 500.
 */
export function deliverLargeAnswers(): ApiMiddleware {
  const deliver = async (request: ApiRequest) => {
    const answer = request.response;
    if (!answer || typeof answer.body !== 'string' || surelyFits(answer.body)) return;
    if (serializedBytes(answer) <= LAMBDA_PAYLOAD_BYTES) return;
    const headers: Record<string, string> = {};
    let contentEncoding: string | undefined;
    for (const [name, value] of Object.entries(answer.headers ?? {})) {
      if (name.toLowerCase() === 'content-encoding') contentEncoding = String(value);
      if (!BODY_HEADERS.has(name.toLowerCase())) headers[name] = String(value);
    }
    const body = Buffer.from(answer.body, answer.isBase64Encoded ? 'base64' : 'utf8');
    const requestId = answerRequestId(request);
    try {
      const { storeAnswer } = await answers();
      const stored = await storeAnswer(body, contentEncoding);
      logger.info('answer delivered by link', { bytes: body.byteLength, key: stored.key });
      request.response = {
        statusCode: 303,
        headers: { ...headers, Location: stored.url, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
        body: JSON.stringify({
          statusCode: 303,
          timestamp: now().toISOString(),
          see: {
            url: stored.url,
            expiresAt: stored.expiresAt.toISOString(),
            statusCode: answer.statusCode ?? 200,
            sizeBytes: body.byteLength,
            ...(contentEncoding ? { contentEncoding } : {}),
          },
        }),
      };
    } catch (error) {
      logger.error('large answer not stored', { error, bytes: body.byteLength });
      const refused = errorResponse({
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        message: 'The answer is too large to send and could not be stored; try again shortly',
        requestId,
        headers: { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) },
      });
      request.response = { ...refused, headers: { ...headers, ...refused.headers } };
    }
  };
  return { name: 'deliverLargeAnswers', after: deliver, onError: deliver };
}
