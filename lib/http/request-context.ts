import { randomUUID } from 'node:crypto';
import { logger } from '../log';
import type { ApiMiddleware, ApiRequest } from './types';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Gives every request an id (the client's x-request-id when sane) and the caller's IP. */
export function requestContext(): ApiMiddleware {
  const before = (request: ApiRequest) => {
    const { event, context } = request;
    const offered = event.headers?.['x-request-id'];
    const requestId =
      offered && SAFE_REQUEST_ID.test(offered)
        ? offered
        : (event.requestContext?.requestId ?? context.awsRequestId ?? randomUUID());
    context.api = {
      requestId,
      ip: event.requestContext?.http?.sourceIp ?? 'unknown',
      userAgent: event.headers?.['user-agent'],
    };
    logger.appendKeys({ requestId });
  };
  const after = (request: ApiRequest) => {
    if (request.response) {
      request.response.headers = { ...request.response.headers, 'X-Request-Id': request.context.api.requestId };
    }
    logger.removeKeys(['requestId']);
  };
  return { name: 'requestContext', before, after, onError: after };
}
