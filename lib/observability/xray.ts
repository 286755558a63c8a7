import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { serviceName } from './names';

/**
 * Powertools Tracer (and the X-Ray SDK under it), loaded by ./tracing.ts only where tracing is on:
 * about 125 KB of the bundle and 15-20 ms of a cold start that nothing else pays.
 */

/**
 * Outgoing HTTPS calls (Stripe) become subsegments too. Errors are only flagged on the handler's
 * segment, never serialized into it (POWERTOOLS_TRACER_CAPTURE_ERROR=false on every function):
 * their messages can hold what lib/log.ts redacts from logs.
 */
export const tracer = new Tracer({ serviceName: serviceName() });

/** The client's calls as X-Ray subsegments (service, operation, status, duration). */
export function captureClient<T>(client: T): T {
  return tracer.captureAWSv3Client(client);
}

/** Powertools' middy middleware: the `## handler` subsegment with ColdStart and Service annotations; never the response. */
export const middleware = () => captureLambdaHandler(tracer, { captureResponse: false });
