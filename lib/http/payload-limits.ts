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
