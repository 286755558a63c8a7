import { config } from '../../config';
import { ProcessorUnavailableError } from '../errors';

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
 * The payment processor behind billing. Stripe when STRIPE_SECRET_KEY is set; otherwise the
 * sandbox processor, which keeps its records in Postgres so every flow runs offline. Every call
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

let processor: Promise<PaymentProcessor> | undefined;

export function paymentProcessor(): Promise<PaymentProcessor> {
  processor ??= config().STRIPE_SECRET_KEY
    ? import('./stripe').then(({ StripeProcessor }) =>
        withOutagesNamed(new StripeProcessor(config().STRIPE_SECRET_KEY!)),
      )
    : import('#local-only/sandbox-processor').then(({ SandboxProcessor }) => new SandboxProcessor());
  return processor;
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
  processor = next ? Promise.resolve(next) : undefined;
}
