import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { overrideConfig } from '../../lib/config';
import { checkoutRoutes } from './stripe-double/checkout-sessions';
import { attachCard, customerRoutes } from './stripe-double/customers';
import { invoiceItemRoutes, invoiceRoutes, invoiceView } from './stripe-double/invoices';
import { pathPattern, startServer } from './stripe-double/server';
import { createState, type DoubleCharge, type FailureMode, type RecordedRequest } from './stripe-double/state';
import { signedEvent } from './stripe-double/webhooks';

/**
 * A local stand-in for the Stripe API, just the endpoints our adapter (lib/billing/processor/stripe.ts)
 * calls, in Stripe's wire format: form-encoded bodies with bracket notation in, JSON objects with
 * `object` fields out, errors as `{ error: { type, code, message } }` with the statuses the official
 * SDK maps to its error classes (402 StripeCardError, 400/404 StripeInvalidRequestError). The real
 * SDK talks to it (`STRIPE_API_BASE`), so its retries and idempotency keys are exercised for real.
 *
 * Idempotency-Key is honoured like Stripe does: a repeat with the same key and parameters replays the
 * first answer (header `Idempotent-Replayed: true`) without a second effect; the same key with other
 * parameters is 400 idempotency_error. Every request is recorded for assertions.
 */

export const DOUBLE_WEBHOOK_SECRET = 'whsec_test_double_0123456789abcdef';
export const DOUBLE_SECRET_KEY = 'sk_test_double_0123456789abcdef';
// The double is split by resource under stripe-double/ (state passed explicitly); tests import here.
export { parseStripeForm } from './stripe-double/server';
export type { DoubleCharge, FailureMode, RecordedRequest } from './stripe-double/state';

export interface StripeDouble {
  /** Base URL for STRIPE_API_BASE. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly customers: Map<string, Record<string, any>>;
  readonly checkoutSessions: Map<string, Record<string, any>>;
  readonly invoiceItems: Map<string, Record<string, any>>;
  readonly charges: DoubleCharge[];
  /** Requests to `path` (`:id` matches one segment) with `method`, oldest first. */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  /** The invoice as GET /v1/invoices/:id answers it, or undefined. */
  invoice(id: string): Record<string, any> | undefined;
  /** Invoices of a customer, oldest first, in wire format. */
  invoicesOf(customerId: string): Array<Record<string, any>>;
  /** Saves a card on the customer as its default payment method; returns the payment_method object. */
  /** Saves a card on the customer; `asDefault: false` is what setup Checkout does (attached, not the invoice default). */
  attachCard(
    customerId: string,
    card?: { last4?: string; declines?: boolean; asDefault?: boolean },
  ): Record<string, any>;
  /** The next `times` requests matching `method` and `path` fail in the given way. */
  failNext(path: string | RegExp, times: number, mode?: FailureMode, method?: string): void;
  clearFailures(): void;
  /** A Stripe event with `object` as `data.object`, its raw JSON and a valid `Stripe-Signature` header. */
  signedEvent(
    type: string,
    object: Record<string, any>,
    options?: { id?: string; secret?: string; timestamp?: number },
  ): { event: Record<string, any>; rawBody: string; signature: string };
  close(): Promise<void>;
}

/** Starts the double on a free port of 127.0.0.1. */
export async function startStripeDouble(options: { webhookSecret?: string } = {}): Promise<StripeDouble> {
  const webhookSecret = options.webhookSecret ?? DOUBLE_WEBHOOK_SECRET;
  const state = createState();
  const server = await startServer(state, [
    ...customerRoutes(state),
    ...checkoutRoutes(state),
    ...invoiceRoutes(state),
    ...invoiceItemRoutes(state),
  ]);
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests: state.requests,
    customers: state.customers,
    checkoutSessions: state.checkoutSessions,
    invoiceItems: state.invoiceItems,
    charges: state.charges,
    requestsTo: (method, path) => {
      const pattern = pathPattern(path);
      return state.requests.filter((r) => r.method === method && pattern.test(r.path));
    },
    invoice: (id) => {
      const record = state.invoices.get(id);
      return record ? invoiceView(state, record) : undefined;
    },
    invoicesOf: (customerId) =>
      [...state.invoices.values()].filter((r) => r.customer === customerId).map((r) => invoiceView(state, r)),
    attachCard: (customerId, card) => attachCard(state, customerId, card),
    failNext: (path, times, mode = 'drop-before', method = 'POST') => {
      state.failures.push({ method, pattern: pathPattern(path), remaining: times, mode });
    },
    clearFailures: () => {
      state.failures = [];
    },
    signedEvent: (type, object, eventOptions) => signedEvent(webhookSecret, type, object, eventOptions),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * The file's tests run against one double: started before them and closed after; before each test
 * the service is configured to call it (key, API base, webhook secret) with a fresh Stripe adapter;
 * after each, the configuration is restored and injected failures are cleared.
 */
export function useStripeDouble(): StripeDouble {
  let double: StripeDouble | undefined;
  let restoreConfig: (() => void) | undefined;
  beforeAll(async () => {
    double = await startStripeDouble();
  });
  afterAll(async () => {
    await double?.close();
  });
  beforeEach(() => {
    restoreConfig = overrideConfig({
      STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY,
      STRIPE_API_BASE: double!.url,
      STRIPE_WEBHOOK_SECRET: DOUBLE_WEBHOOK_SECRET,
    });
    // The next paymentProcessor() builds a fresh Stripe adapter from this config.
    usePaymentProcessor(undefined);
  });
  afterEach(() => {
    restoreConfig?.();
    restoreConfig = undefined;
    usePaymentProcessor(undefined);
    double?.clearFailures();
  });
  // The double exists once beforeAll has run; until then the tests only hold this stand-in.
  return new Proxy({} as StripeDouble, {
    get(_target, key) {
      if (!double) throw new Error('useStripeDouble: the double starts in beforeAll');
      const value = Reflect.get(double, key);
      return typeof value === 'function' ? value.bind(double) : value;
    },
  });
}
