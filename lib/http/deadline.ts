import { logger } from '../log';
import { corsOrigins } from './cors';
import { errorResponse } from './error-envelope';
import { answeredRequestIdOf } from './request-context';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from './route';
import type { ApiContext, ApiEvent, ApiResult } from './types';

/** Left for the answer to reach the gateway before the function would be stopped. */
const MARGIN_MS = 1_000;

/**
 * Answers 503 SERVICE_UNAVAILABLE in our envelope shortly before the function's timeout when the
 * request is still waiting (a database connection that never answers, a query the driver lost):
 * otherwise Lambda stops the function and API Gateway answers its own bare 503/504. The work left
 * running is abandoned; every change it could make is inside one transaction that never commits
 * without its client.
 */
export function answerBeforeTimeout(
  handler: (event: ApiEvent, context: ApiContext) => Promise<ApiResult>,
): (event: ApiEvent, context: ApiContext) => Promise<ApiResult> {
  const guarded = async (event: ApiEvent, context: ApiContext): Promise<ApiResult> => {
    // Without a Lambda context (a handler called directly): the default function timeout.
    const remaining = context?.getRemainingTimeInMillis?.() ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS * 1000;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<ApiResult>((resolve) => {
      timer = setTimeout(
        () => {
          logger.error('request out of time', { route: event.routeKey, budgetMs: remaining - MARGIN_MS });
          resolve(timedOut(event, context));
        },
        Math.max(0, remaining - MARGIN_MS),
      );
    });
    try {
      return await Promise.race([handler(event, context), deadline]);
    } finally {
      clearTimeout(timer);
    }
  };
  return guarded;
}

function timedOut(event: ApiEvent, context: ApiContext): ApiResult {
  const requestId = answeredRequestIdOf(event, context);
  const answer = errorResponse({
    status: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: 'The service could not answer in time; try again shortly',
    requestId,
    headers: { 'Retry-After': '5', 'X-Request-Id': requestId, ...corsHeaders(event) },
  });
  return answer;
}

/** What the CORS middleware would have added, so a browser can read this answer too. */
function corsHeaders(event: ApiEvent): Record<string, string> {
  const origins = corsOrigins();
  if (origins.includes('*')) return { 'Access-Control-Allow-Origin': '*' };
  const origin = event.headers?.origin;
  return origin && origins.includes(origin) ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' } : {};
}
