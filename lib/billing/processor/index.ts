import { config } from '../../config';

export interface CustomerInput {
  organizationId: string;
  name: string;
  email: string;
}

/**
 * The payment processor behind billing. Stripe when STRIPE_SECRET_KEY is set; otherwise the
 * sandbox processor, which keeps its records in Postgres so every flow runs offline.
 */
export interface PaymentProcessor {
  readonly name: 'stripe' | 'sandbox';
  /** Creates (idempotently per organization) the billing customer and returns its id. */
  createCustomer(input: CustomerInput): Promise<string>;
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
