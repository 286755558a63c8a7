import { Tracer } from '@aws-lambda-powertools/tracer';
import { serviceName } from './names';

/**
 * Powertools Tracer (and the X-Ray SDK under it), loaded by ./tracing.ts only where tracing is on
 * and only for the first traced call: about 125 KB of the bundle and 121 M instructions (15-20 ms)
 * that a cold start no longer pays at init (issue 35).
 */

/**
 * Outgoing HTTPS calls made after it loads (Stripe, lib/billing/processor/stripe.ts) become
 * subsegments too, under the function's segment (Lambda's, there is no handler subsegment). No
 * error is serialized into a trace (POWERTOOLS_TRACER_CAPTURE_ERROR=false on every function):
 * messages can hold what lib/log.ts redacts from logs.
 */
export const tracer = new Tracer({ serviceName: serviceName() });

/** The client's calls as X-Ray subsegments (service, operation, status, duration). */
export function captureClient<T>(client: T): T {
  return tracer.captureAWSv3Client(client);
}
