import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { tracingEnabled } from './names';
import { delegatingMiddleware, optionalModule } from './optional';

/**
 * AWS X-Ray through Powertools Tracer (./xray.ts), loaded only where Lambda runs the function with
 * active tracing (`tracingEnabled`): locally, in tests and in test/infra's bundle check nothing of
 * the X-Ray SDK is evaluated. In Lambda it loads during init (this module starts it), before the
 * first invocation. Traced: the invocation (Lambda's own segments), the handler, and the calls of
 * the AWS SDK clients passed through `traced` (Secrets Manager, S3, SES, SQS) and of outgoing HTTPS
 * (Stripe). Not traced: PostgreSQL (the X-Ray SDK instruments `pg`, not postgres.js).
 */

const xray = optionalModule('tracing', tracingEnabled, () => import('./xray'));

/**
 * An AWS SDK v3 client whose calls are traced; the client itself, untouched, where tracing is off.
 * Clients are made on first use inside an invocation, by when the tracer has loaded.
 */
export function traced<T>(client: T): T {
  return xray.current()?.captureClient(client) ?? client;
}

/** middy middleware: the handler's X-Ray subsegment (Powertools captureLambdaHandler); nothing where tracing is off. */
export function tracingMiddleware<E, R, C extends Context>(): MiddlewareObj<E, R, Error, C> {
  return delegatingMiddleware('tracing', xray, (loaded) => loaded.middleware());
}
