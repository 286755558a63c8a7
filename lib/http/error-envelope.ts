import { now } from '../clock';
import { logger } from '../log';
import { type ErrorCode, HttpError } from './errors';
import type { ApiMiddleware, ApiRequest } from './types';

/** Errors middy's own middlewares throw (createError), by status, mapped to our codes. */
const MIDDY_ERROR_CODES: Record<number, { code: ErrorCode; status: number }> = {
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 },
  422: { code: 'MALFORMED_JSON', status: 400 },
};

/**
 * Turns any thrown error into the error envelope
 * `{ statusCode, timestamp, error: { code, message, details? }, requestId }`.
 * Only messages of statuses below 500 reach the client.
 */
export function errorEnvelope(): ApiMiddleware {
  const onError = (request: ApiRequest) => {
    const { error } = request;
    const requestId = request.context.api?.requestId ?? request.context.awsRequestId;
    let status = 500;
    let code: ErrorCode = 'INTERNAL';
    let message = 'Internal server error';
    let details: HttpError['details'];
    let headers: Record<string, string> = {};

    if (error instanceof HttpError) {
      ({ statusCode: status, code, message, details, headers } = error);
    } else if (error && typeof (error as { statusCode?: unknown }).statusCode === 'number') {
      const middyStatus = (error as unknown as { statusCode: number }).statusCode;
      const known = MIDDY_ERROR_CODES[middyStatus];
      if (known) {
        ({ code, status } = known);
        message = known.code === 'MALFORMED_JSON' ? 'The request body is not valid JSON' : error.message;
      }
    }

    if (status >= 500) logger.error('request failed', { error });
    else logger.info('request refused', { status, code });

    request.response = {
      statusCode: status,
      headers: { ...headers, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
      body: JSON.stringify({
        statusCode: status,
        timestamp: now().toISOString(),
        error: details ? { code, message, details } : { code, message },
        requestId,
      }),
    };
  };
  return { name: 'errorEnvelope', onError };
}
