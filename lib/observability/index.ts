import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { metricsMiddleware } from './metrics';

/**
 * The observability middleware of every function, outermost in its chain: the metrics (cold start,
 * and the invocation's business metrics written when it ends). lib/http/endpoint.ts puts it first in
 * every route's chain. No tracing middleware: Lambda's active tracing records the invocation, and
 * the X-Ray SDK is loaded only for the calls worth a subsegment (./tracing.ts, issue 35).
 */
export function observability<E, R, C extends Context>() {
  return [metricsMiddleware<E, R, C>()];
}

/**
 * A function that is not a route (maintenance, import worker, migrations) with the same
 * observability. No early timeout from middy: these functions watch their own time (the import
 * worker pauses at a checkpoint), and middy's timer would read the remaining time first.
 */
export function observed<E, R>(handler: (event: E, context: Context) => Promise<R>) {
  return middy<E, R, Error, Context>({ timeoutEarlyInMillis: 0 }).use(observability<E, R, Context>()).handler(handler);
}
