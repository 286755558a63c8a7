import { config } from '../../config';

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
    ? import('./stripe').then(({ StripeProcessor }) => new StripeProcessor(config().STRIPE_SECRET_KEY!))
    : import('./sandbox').then(({ SandboxProcessor }) => new SandboxProcessor());
  return processor;
}

/** Tests install a failing or recording processor; only the processor is ever replaced. */
export function usePaymentProcessor(next: PaymentProcessor | undefined): void {
  processor = next ? Promise.resolve(next) : undefined;
}
