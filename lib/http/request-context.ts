import { randomUUID } from 'node:crypto';
import { logger } from '../log';
import { edgeClientIp, originVerifyValue } from './edge';
import type { ApiContext, ApiEvent, ApiMiddleware, ApiRequest } from './types';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The request's id: the client's x-request-id when sane, else the gateway's. Stable for one event. */
export function requestIdOf(event: ApiEvent, context: ApiContext): string {
  const offered = event.headers?.['x-request-id'];
  if (offered && SAFE_REQUEST_ID.test(offered)) return offered;
  event.requestContext ??= {} as ApiEvent['requestContext'];
  event.requestContext.requestId ??= context.awsRequestId ?? randomUUID();
  return event.requestContext.requestId;
}

/**
 * Gives every request an id (the client's x-request-id when sane) and the caller's IP: API
 * Gateway's sourceIp, or behind the edge (ORIGIN_VERIFY_SECRET set) the viewer CloudFront names,
 * after refusing (403) a request that did not come through CloudFront (lib/http/edge.ts).
 */
export function requestContext(): ApiMiddleware {
  const before = async (request: ApiRequest) => {
    const { event, context } = request;
    const requestId = requestIdOf(event, context);
    context.api = {
      requestId,
      ip: event.requestContext?.http?.sourceIp ?? 'unknown',
      userAgent: event.headers?.['user-agent'],
    };
    logger.appendKeys({ requestId });
    const originVerify = await originVerifyValue();
    if (originVerify) context.api.ip = edgeClientIp(event, originVerify);
  };
  const after = (request: ApiRequest) => {
    if (request.response) {
      request.response.headers = { ...request.response.headers, 'X-Request-Id': request.context.api.requestId };
    }
    logger.removeKeys(['requestId']);
  };
  return { name: 'requestContext', before, after, onError: after };
}
