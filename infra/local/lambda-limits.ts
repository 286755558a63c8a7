import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { exceedsLambdaPayload } from '../../lib/http/payload-limits';

/** Longest request target (path and query) served, answered 414 beyond: about what API Gateway takes. */
export const MAX_URL_BYTES = 8 * 1024;

/**
 * What API Gateway answers when the function's result is over Lambda's payload limit: its own bare
 * 500, no envelope, no request id. The local server and the test harness answer it too, so a
 * route that escapes the service's large-answer mechanism (lib/http/large-answers.ts) fails in
 * the tests as it would in the cloud.
 */
export const GATEWAY_INTERNAL_ERROR: APIGatewayProxyStructuredResultV2 = {
  statusCode: 500,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'Internal Server Error' }),
};

/** The function's result as the gateway delivers it: itself, or the gateway's 500 when it is over the limit. */
export function asDelivered(result: APIGatewayProxyStructuredResultV2): APIGatewayProxyStructuredResultV2 {
  return exceedsLambdaPayload(result) ? GATEWAY_INTERNAL_ERROR : result;
}

/** Whether Lambda would refuse this invocation event (over its payload limit) before the function runs. */
export function eventTooLarge(event: APIGatewayProxyEventV2): boolean {
  return exceedsLambdaPayload(event);
}
