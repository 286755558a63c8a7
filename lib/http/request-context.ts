import { randomUUID } from 'node:crypto';
import { logger } from '../log';
import { edgeClientIp, originVerifyValue } from './edge';
import type { ApiContext, ApiEvent, ApiMiddleware, ApiRequest } from './types';

/** A client's x-request-id worth keeping: 8 to 128 characters of letters, digits and `._:-`. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The service's own id of the request: the gateway's (API Gateway, the local server), else the
 * Lambda invocation's. Never the client's: this is the id the audit chain and the logs carry.
 * Stable for one event.
 */
export function requestIdOf(event: ApiEvent, context: ApiContext): string {
  event.requestContext ??= {} as ApiEvent['requestContext'];
  event.requestContext.requestId ??= context.awsRequestId ?? randomUUID();
  return event.requestContext.requestId;
}

/** The client's x-request-id when sane (SAFE_REQUEST_ID), else none: bounded whatever was sent. */
export function clientRequestIdOf(event: ApiEvent): string | undefined {
  const offered = event.headers?.['x-request-id'];
  return offered && SAFE_REQUEST_ID.test(offered) ? offered : undefined;
}

/** The id a response names (X-Request-Id, the error envelope): the client's own echoed when sane, else the service's. */
export function answeredRequestIdOf(event: ApiEvent, context: ApiContext): string {
  return clientRequestIdOf(event) ?? requestIdOf(event, context);
}

/**
 * Gives every request the service's own id, keeps the client's x-request-id apart when sane, and
 * the caller's IP: API Gateway's sourceIp, or behind the edge (ORIGIN_VERIFY_SECRET set) the
 * viewer CloudFront names, after refusing (403) a request that did not come through CloudFront
 * (lib/http/edge.ts).
 */
export function requestContext(): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    const { event, context } = request;
    const requestId = requestIdOf(event, context);
    const clientRequestId = clientRequestIdOf(event);
    context.api = {
      requestId,
      clientRequestId,
      ip: event.requestContext?.http?.sourceIp ?? 'unknown',
      userAgent: event.headers?.['user-agent'],
    };
    logger.appendKeys(clientRequestId ? { requestId, clientRequestId } : { requestId });
    const originVerify = await originVerifyValue();
    if (originVerify) context.api.ip = edgeClientIp(event, originVerify);
  };
  const after = (request: ApiRequest) => {
    if (request.response) {
      const { api } = request.context;
      request.response.headers = { ...request.response.headers, 'X-Request-Id': api.clientRequestId ?? api.requestId };
    }
    logger.removeKeys(['requestId', 'clientRequestId']);
  };
  return { name: 'requestContext', before, after, onError: after };
}
