import { config, runsDeployed, SECRET_MAX_AGE_SECONDS } from '../../config';
import { lazyRetrying } from '../../lazy';
import { PaymentsNotConfiguredError, ProcessorUnavailableError } from '../errors';

export interface CustomerInput {
  organizationId: string;
  name: string;
  email: string;
}

export interface InvoiceLine {
  description: string;
  amountCents: number;
}

export interface InvoiceResult {
  invoiceId: string;
  hostedInvoiceUrl: string | null;
  /** paid: settled at once; open: waiting (no card, or the processor settles later); failed: declined. */
  status: 'paid' | 'open' | 'failed';
}

/**
 * The payment processor behind billing. Stripe when STRIPE_SECRET_KEY is set; otherwise, locally
 * only, the sandbox processor, which keeps its records in Postgres so every flow runs offline. Every call
 * that creates something takes an idempotency key, so a retry never charges twice.
 */
export interface PaymentProcessor {
  readonly name: 'stripe' | 'sandbox';
  createCustomer(input: CustomerInput): Promise<string>;
  /** A checkout session in setup mode: the card is saved, nothing is charged. */
  createSetupSession(input: {
    customerId: string;
    successUrl: string;
    cancelUrl: string;
    idempotencyKey: string;
  }): Promise<{ id: string; url: string }>;
  /** Invoices the lines to the customer and tries to collect with the saved card. */
  chargeInvoice(input: {
    customerId: string;
    lines: InvoiceLine[];
    idempotencyKey: string;
    metadata: Record<string, string>;
  }): Promise<InvoiceResult>;
  /** Tries again to collect an open invoice (after a card was attached). */
  payInvoice(invoiceId: string, idempotencyKey: string): Promise<InvoiceResult>;
  /**
   * Cancels an unpaid invoice so it can never be collected. Answers `paid` instead when the
   * invoice was paid before the void could take effect (the caller must then treat it as paid);
   * an invoice already void answers `void` again, so a retry is harmless.
   */
  voidInvoice(invoiceId: string, idempotencyKey: string): Promise<'void' | 'paid'>;
}

let installed: PaymentProcessor | undefined;
let stripe: { secretKey: string; processor: () => Promise<PaymentProcessor> } | undefined;

/** The sandbox, imported on first use; a failed import is tried again on the next call. */
const sandbox = lazyRetrying(async () => {
  const { SandboxProcessor } = await import('#local-only/sandbox-processor');
  return new SandboxProcessor() as PaymentProcessor;
});

/**
 * The processor to use now: Stripe when a Stripe key is configured (in the cloud read again from
 * STRIPE_SECRET_ARN past its time-to-live, so keys put in after the deployment reach warm
 * functions within a minute, and a new key makes a new client); without one the sandbox locally,
 * and deployed (runsDeployed) PaymentsNotConfiguredError, a 503 PAYMENTS_NOT_CONFIGURED with
 * Retry-After: the sandbox never serves a deployed function. A failed import is never kept.
 */
export async function paymentProcessor(): Promise<PaymentProcessor> {
  if (installed) return installed;
  if (config().STRIPE_SECRET_ARN) await (await import('../../aws/secrets')).loadCloudSecrets();
  const secretKey = config().STRIPE_SECRET_KEY;
  if (!secretKey) {
    if (runsDeployed()) throw new PaymentsNotConfiguredError(SECRET_MAX_AGE_SECONDS.stripe);
    return sandbox();
  }
  if (stripe?.secretKey !== secretKey)
    stripe = {
      secretKey,
      processor: lazyRetrying(async () => {
        const { StripeProcessor } = await import('./stripe');
        return withOutagesNamed(new StripeProcessor(secretKey));
      }),
    };
  return stripe.processor();
}

/**
 * Whether a processor is there to call (maintenance skips processor work without one, and
 * registration leaves the customer to it). Only a missing configuration counts: an outage is found
 * by the call.
 */
export async function paymentsConfigured(): Promise<boolean> {
  try {
    await paymentProcessor();
    return true;
  } catch (error) {
    if (error instanceof PaymentsNotConfiguredError) return false;
    throw error;
  }
}

/**
 * Processor work done after a commit (a new organization's customer, a charge's invoice): run now
 * when payments are configured; otherwise skipped without an error, as maintenance does the same
 * work once they are.
 */
export async function whenPaymentsConfigured(work: () => Promise<unknown>): Promise<void> {
  if (await paymentsConfigured()) await work();
}

/**
 * Stripe's SDK errors for "could not reach Stripe" (after its own retries), "Stripe failed" (5xx)
 * and "too many requests". A card decline or a refused request is an answer, not an outage.
 */
const OUTAGE_ERROR_TYPES = new Set(['StripeConnectionError', 'StripeAPIError', 'StripeRateLimitError']);

function isProcessorOutage(error: unknown): boolean {
  const { type, statusCode } = (error ?? {}) as { type?: unknown; statusCode?: unknown };
  return OUTAGE_ERROR_TYPES.has(type as string) || (typeof statusCode === 'number' && statusCode >= 500);
}

/**
 * Every call of `processor` throws ProcessorUnavailableError (503) for an outage. A request that
 * needs the processor before its commit then answers 503 with nothing changed; calls made after a
 * commit are retried by maintenance whatever they throw.
 */
function withOutagesNamed<P extends PaymentProcessor>(processor: P): P {
  // A proxy rather than a copy: the adapter's own methods (and `instanceof`) stay as they are.
  return new Proxy(processor, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await value.apply(target, args);
        } catch (error) {
          throw isProcessorOutage(error) ? new ProcessorUnavailableError(error) : error;
        }
      };
    },
  });
}

/** Tests install a failing or recording processor; only the processor is ever replaced. */
export function usePaymentProcessor(next: PaymentProcessor | undefined): void {
  installed = next;
  stripe = undefined;
  sandbox.reset();
}
