import { now } from '../clock';
import { isDatabaseUnavailable } from '../db/errors';
import { DomainError, type InputProblem, ServiceUnavailableError } from '../errors';
import { logger } from '../log';
import { ERROR_STATUS, type ErrorCode, type ErrorDetail, HttpError } from './errors';
import type { ApiMiddleware, ApiRequest, ApiResult, ApiState } from './types';

const REQUEST_PARTS = ['body', 'query', 'path'] as const;

/** Whether a zod object schema (possibly wrapped in a default or optional) declares `key`. */
function declares(schema: unknown, key: string): boolean {
  let def = (schema as { _zod?: { def?: { shape?: object; innerType?: unknown } } } | undefined)?._zod?.def;
  while (def && !def.shape && def.innerType)
    def = (def.innerType as typeof schema & { _zod?: { def?: typeof def } })?._zod?.def;
  return Boolean(def?.shape && key in def.shape);
}

/**
 * Where the request carried a field the domain names by its input path: the part (body, query or
 * path) whose parsed value, else whose schema, has its first segment; the body when none says.
 */
function locate(
  problem: InputProblem,
  api: ApiState | undefined,
  schemas: Partial<Record<(typeof REQUEST_PARTS)[number], unknown>>,
): ErrorDetail {
  const key = problem.field.split('.')[0]!;
  const part =
    REQUEST_PARTS.find((name) => {
      const value = api?.[name];
      return typeof value === 'object' && value !== null && Object.hasOwn(value, key);
    }) ??
    REQUEST_PARTS.find((name) => declares(schemas[name], key)) ??
    'body';
  return { path: `${part}.${problem.field}`, message: problem.message };
}

/** Long enough for a restarted database or a failed-over proxy to take connections again. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

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
export function errorEnvelope(schemas: Partial<Record<(typeof REQUEST_PARTS)[number], unknown>> = {}): ApiMiddleware {
  const onError = (request: ApiRequest) => {
    const thrown = request.error;
    // A database that is down, unreachable or out of time is no defect of ours: 503, try again.
    const error = isDatabaseUnavailable(thrown)
      ? new ServiceUnavailableError(
          'The database is briefly unavailable; try again shortly',
          DATABASE_RETRY_AFTER_SECONDS,
        )
      : thrown;
    const requestId = answerRequestId(request);
    let status = 500;
    let code: ErrorCode = 'INTERNAL';
    let message = 'Internal server error';
    let details: HttpError['details'];
    let headers: Record<string, string> = {};

    if (error instanceof DomainError) {
      ({ code, message } = error);
      status = ERROR_STATUS[error.code];
      const located = error.options.problems?.map((problem) => locate(problem, request.context.api, schemas));
      // Named as the request carried them, like the schema's own VALIDATION_FAILED answers.
      if (located) message = `Invalid request: ${located.map((detail) => detail.path).join(', ')}`;
      details = located ?? error.options.findings;
      if (error.options.retryAfterSeconds !== undefined)
        headers = { 'Retry-After': String(error.options.retryAfterSeconds) };
    } else if (error instanceof HttpError) {
      ({ statusCode: status, code, message, details, headers } = error);
    } else if (error && typeof (error as { statusCode?: unknown }).statusCode === 'number') {
      const middyStatus = (error as unknown as { statusCode: number }).statusCode;
      const known = MIDDY_ERROR_CODES[middyStatus];
      if (known) {
        ({ code, status } = known);
        message = known.code === 'MALFORMED_JSON' ? 'The request body is not valid JSON' : error.message;
      }
    }

    // The route names which handler failed (the request id ties the line to the answer); the logger
    // redacts what the error carries (lib/log.ts).
    const route = request.event.routeKey;
    if (status >= 500) logger.error('request failed', { status, code, route, error: thrown });
    else logger.info('request refused', { status, code, route });

    request.response = errorResponse({ status, code, message, details, requestId, headers });
  };
  return { name: 'errorEnvelope', onError };
}

/** The request id an answer carries: the client's own when it sent one (as X-Request-Id echoes), else ours. */
export function answerRequestId(request: ApiRequest): string {
  const api = request.context.api;
  return api?.clientRequestId ?? api?.requestId ?? request.context.awsRequestId;
}

/** The error envelope as a Lambda answer: `{ statusCode, timestamp, error: { code, message, details? }, requestId }`. */
export function errorResponse(answer: {
  status: number;
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[] | undefined;
  requestId: string;
  headers?: Record<string, string>;
}): ApiResult {
  const { status, code, message, details, requestId, headers = {} } = answer;
  return {
    statusCode: status,
    headers: { ...headers, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
    body: JSON.stringify({
      statusCode: status,
      timestamp: now().toISOString(),
      error: details ? { code, message, details } : { code, message },
      requestId,
    }),
  };
}
