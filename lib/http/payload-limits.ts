import { HttpError } from './errors';
import type { ApiMiddleware } from './types';

/**
 * Lambda's limit on a synchronous invocation, each way: the event it receives and the result it
 * returns, as the runtime serializes them (JSON, so a body inside is escaped a second time). A
 * result over it never reaches the client: API Gateway answers its bare 500.
 */
export const LAMBDA_PAYLOAD_BYTES = 6_291_456;

/**
 * The largest request body the service takes, locally and in the cloud (the edge refuses larger
 * bodies by Content-Length, the function and the local server by their bytes: 413
 * PAYLOAD_TOO_LARGE). Chosen so that the invocation event of any JSON body still fits
 * LAMBDA_PAYLOAD_BYTES: the event escapes the body once more, which at worst doubles a JSON body
 * (every `"` and `\` becomes two characters; other characters need no escape in valid JSON), and
 * the rest of the event (headers up to 16 KB, the URL three times, the request context) stays far
 * below the 291,456 bytes left. Decided in docs/decisions.md (issue 32).
 */
export const MAX_REQUEST_BODY_BYTES = 3_000_000;

/** Bytes of a value as Lambda's runtime serializes it (an invocation's event or result). */
export const serializedBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * At least as many bytes as JSON.stringify(value) takes in UTF-8, from the lengths alone: a UTF-16
 * code unit serializes to at most 6 bytes (`\u001f`; a character of 3 UTF-8 bytes, or a surrogate
 * pair's 4 bytes over two units, is fewer), a number to at most 24 characters, and each key, value
 * and container adds its quotes, colon, comma and brackets. Infinity once the walk goes deeper than
 * 64 levels or meets a value JSON.stringify treats specially (toJSON, a non-plain object).
 */
function serializedBytesBound(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length * 6 + 2;
  if (typeof value === 'number') return 24;
  if (typeof value === 'boolean' || value === null || value === undefined) return 9;
  if (typeof value !== 'object' || depth > 64) return Number.POSITIVE_INFINITY;
  if (Array.isArray(value)) {
    let bytes = 2;
    for (const item of value) bytes += serializedBytesBound(item, depth + 1) + 1;
    return bytes;
  }
  const prototype = Object.getPrototypeOf(value);
  if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in value) return Number.POSITIVE_INFINITY;
  let bytes = 2;
  for (const key in value)
    bytes += key.length * 6 + 4 + serializedBytesBound((value as Record<string, unknown>)[key], depth + 1);
  return bytes;
}

/**
 * Whether a value (an invocation's event or result) is over LAMBDA_PAYLOAD_BYTES as the runtime
 * serializes it: the same verdict as `serializedBytes(value) > LAMBDA_PAYLOAD_BYTES`, without
 * serializing a value whose length bound is already within the limit (every request's answer: it
 * is checked on the way out).
 */
export function exceedsLambdaPayload(value: unknown): boolean {
  if (serializedBytesBound(value) <= LAMBDA_PAYLOAD_BYTES) return false;
  return serializedBytes(value) > LAMBDA_PAYLOAD_BYTES;
}

/** Bytes of the body an event carries: the bytes sent (a base64 body decoded). */
function bodyBytes(body: string, isBase64Encoded: boolean | undefined): number {
  return isBase64Encoded ? Buffer.byteLength(body, 'base64') : Buffer.byteLength(body);
}

/**
 * Refuses a request body over MAX_REQUEST_BODY_BYTES with 413 PAYLOAD_TOO_LARGE, before anything
 * else reads it: the one limit the edge and the local server apply too, checked here for bodies
 * that reach a function some other way (an edge rule bypassed by a body sent without its length).
 */
export function requestBodyLimit(): ApiMiddleware {
  return {
    name: 'requestBodyLimit',
    before: (request) => {
      const { body, isBase64Encoded } = request.event;
      if (typeof body === 'string' && bodyBytes(body, isBase64Encoded) > MAX_REQUEST_BODY_BYTES)
        throw new HttpError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`);
    },
  };
}
