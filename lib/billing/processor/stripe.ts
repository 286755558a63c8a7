import type Stripe from 'stripe';
import type { CustomerInput, PaymentProcessor } from '.';

/** Stripe through the official SDK, imported on first use so routes that never bill don't load it. */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  private client: Promise<Stripe> | undefined;

  constructor(private readonly secretKey: string) {}

  private stripe(): Promise<Stripe> {
    this.client ??= import('stripe').then(({ default: StripeClient }) => new StripeClient(this.secretKey, { maxNetworkRetries: 2 }));
    return this.client;
  }

  async createCustomer(input: CustomerInput): Promise<string> {
    const stripe = await this.stripe();
    const customer = await stripe.customers.create(
      { name: input.name, email: input.email || undefined, metadata: { organizationId: input.organizationId } },
      // A retry after a lost answer must not create a second customer.
      { idempotencyKey: `organization-customer-${input.organizationId}` },
    );
    return customer.id;
  }
}
