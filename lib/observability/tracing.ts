import { tracingEnabled } from './names';
import { optionalModule } from './optional';

/**
 * AWS X-Ray. Every function runs with Lambda's active tracing: Lambda itself records each
 * invocation's segment (Initialization on a cold start, Invocation, Overhead) with nothing loaded in
 * the function. The Powertools Tracer with the X-Ray SDK (./xray.ts) adds subsegments only for the
 * calls that leave the function and are worth seeing: the AWS SDK clients passed through `traced`
 * (S3, SES, SQS) and outgoing HTTPS (Stripe, after `traceOutgoingCalls`). It is loaded on the first
 * such client, never at init: at init it cost every cold start about 121 M instructions, more than
 * the whole route (issue 35, docs/decisions.md). Only where Lambda runs the function with active
 * tracing (`tracingEnabled`): locally, in tests and in test/infra's bundle check nothing of the
 * X-Ray SDK is evaluated. Not traced: PostgreSQL (the X-Ray SDK instruments `pg`, not postgres.js)
 * and the Secrets Manager reads of a cold start (lib/aws/secrets.ts).
 */

const xray = optionalModule('tracing', tracingEnabled, () => import('./xray'), { atInit: false });

/**
 * An AWS SDK v3 client whose calls are traced; the client itself, untouched, where tracing is off.
 * The first traced client of a process starts loading the tracer; until it has loaded, the client's
 * `send` waits for it, so every call is traced, the first one too.
 */
export function traced<T extends object>(client: T): T {
  if (!tracingEnabled()) return client;
  const loaded = xray.current();
  if (loaded) return loaded.captureClient(client);
  const captured = xray.ready().then((module) => (module ? module.captureClient(client) : client));
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property !== 'send' || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        captured.then((ready) => (ready as { send(...args: unknown[]): unknown }).send(...args));
    },
  });
}

/**
 * Loads the tracer where tracing is on, so outgoing HTTPS calls made after it (the Stripe SDK's)
 * are subsegments: call it before creating the client that makes them. Immediate where tracing is off.
 */
export async function traceOutgoingCalls(): Promise<void> {
  await xray.ready();
}
