import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import { config } from '../../config';
import { lazyRetrying } from '../../lazy';
import { traceOutgoingCalls } from '../../observability/tracing';
import type { CustomerInput, InvoiceLine, InvoiceResult, PaymentProcessor } from '.';

/** Stripe through the official SDK, imported on first use so routes that never bill don't load it. */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  constructor(private readonly secretKey: string) {}

  // A failed import is tried again on the next call (lib/lazy.ts).
  // Where tracing is on, its calls are X-Ray subsegments (the tracer loaded first, lib/observability/tracing.ts).
  private readonly stripe = lazyRetrying<Stripe>(() =>
    traceOutgoingCalls()
      .then(() => import('stripe'))
      .then(({ default: StripeClient }) => {
        const api = config().STRIPE_API_BASE ? new URL(config().STRIPE_API_BASE!) : undefined;
        return new StripeClient(this.secretKey, {
          maxNetworkRetries: 2,
          ...(api
            ? {
                host: api.hostname,
                port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)),
                protocol: api.protocol.replace(':', '') as 'http' | 'https',
              }
            : {}),
        });
      }),
  );

  async createCustomer(input: CustomerInput): Promise<string> {
    const stripe = await this.stripe();
    const customer = await stripe.customers.create(
      { name: input.name, email: input.email || undefined, metadata: { organizationId: input.organizationId } },
      // A retry after a lost answer must not create a second customer.
      { idempotencyKey: `organization-customer-${input.organizationId}` },
    );
    return customer.id;
  }

  async createSetupSession(input: {
    customerId: string;
    successUrl: string;
    cancelUrl: string;
    idempotencyKey: string;
  }) {
    const stripe = await this.stripe();
    // Stripe refuses a key reused with other parameters (400 idempotency_error), so the return URLs
    // are part of the key: a repeat with the same URLs reuses the session, other URLs get their own.
    const urls = createHash('sha256').update(`${input.successUrl}\n${input.cancelUrl}`).digest('hex').slice(0, 16);
    const session = await stripe.checkout.sessions.create(
      {
        mode: 'setup',
        customer: input.customerId,
        currency: 'usd',
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
      },
      { idempotencyKey: `${input.idempotencyKey}:${urls}` },
    );
    return { id: session.id, url: session.url! };
  }

  async chargeInvoice(input: {
    customerId: string;
    lines: InvoiceLine[];
    idempotencyKey: string;
    metadata: Record<string, string>;
  }): Promise<InvoiceResult> {
    const stripe = await this.stripe();
    const invoice = await stripe.invoices.create(
      {
        customer: input.customerId,
        collection_method: 'charge_automatically',
        auto_advance: false,
        pending_invoice_items_behavior: 'exclude',
        metadata: input.metadata,
      },
      { idempotencyKey: `${input.idempotencyKey}:invoice` },
    );
    for (const [index, line] of input.lines.entries()) {
      await stripe.invoiceItems.create(
        {
          customer: input.customerId,
          invoice: invoice.id,
          amount: line.amountCents,
          currency: 'usd',
          description: line.description,
        },
        { idempotencyKey: `${input.idempotencyKey}:line:${index}` },
      );
    }
    await stripe.invoices.finalizeInvoice(invoice.id!, {}, { idempotencyKey: `${input.idempotencyKey}:finalize` });
    return this.payInvoice(invoice.id!, `${input.idempotencyKey}:pay`);
  }

  async payInvoice(invoiceId: string, idempotencyKey: string): Promise<InvoiceResult> {
    const stripe = await this.stripe();
    try {
      const paid = await stripe.invoices.pay(invoiceId, {}, { idempotencyKey });
      return {
        invoiceId,
        hostedInvoiceUrl: paid.hosted_invoice_url ?? null,
        status: paid.status === 'paid' ? 'paid' : 'open',
      };
    } catch (error) {
      // A declined card or no card on file: the invoice stays open; the webhook reports failure.
      if (
        (error as { type?: string }).type === 'StripeCardError' ||
        (error as { code?: string }).code === 'invoice_payment_intent_requires_action'
      ) {
        const invoice = await stripe.invoices.retrieve(invoiceId);
        return { invoiceId, hostedInvoiceUrl: invoice.hosted_invoice_url ?? null, status: 'failed' };
      }
      if (
        (error as { code?: string }).code === 'invoice_no_customer_payment_method' ||
        (error as { code?: string }).code === 'resource_missing'
      ) {
        const invoice = await stripe.invoices.retrieve(invoiceId);
        return { invoiceId, hostedInvoiceUrl: invoice.hosted_invoice_url ?? null, status: 'open' };
      }
      if ((error as { type?: string }).type === 'StripeInvalidRequestError') {
        // Paid meanwhile (on the hosted invoice page, say): Stripe refuses to pay it again, but it is paid.
        const invoice = await stripe.invoices.retrieve(invoiceId);
        if (invoice.status === 'paid')
          return { invoiceId, hostedInvoiceUrl: invoice.hosted_invoice_url ?? null, status: 'paid' };
      }
      throw error;
    }
  }

  async voidInvoice(invoiceId: string, idempotencyKey: string): Promise<'void' | 'paid'> {
    const stripe = await this.stripe();
    const invoice = await stripe.invoices.retrieve(invoiceId);
    if (invoice.status === 'paid') return 'paid';
    if (invoice.status === 'void') return 'void';
    if (invoice.status === 'draft') {
      // A draft (finalizing never finished) cannot be voided, only deleted; it was never collectable.
      await stripe.invoices.del(invoiceId);
      return 'void';
    }
    try {
      await stripe.invoices.voidInvoice(invoiceId, {}, { idempotencyKey });
      return 'void';
    } catch (error) {
      // Paid (or voided) between the read and the void: the invoice's own state answers.
      const after = await stripe.invoices.retrieve(invoiceId);
      if (after.status === 'paid') return 'paid';
      if (after.status === 'void') return 'void';
      throw error;
    }
  }

  /**
   * Setup Checkout attaches the card but does not make it the customer's invoice default, and
   * invoices are collected only with the default: set it from the session's setup intent.
   */
  async makeSetupIntentCardDefault(
    setupIntentId: string,
  ): Promise<{ customerId: string; paymentMethodId: string } | null> {
    const stripe = await this.stripe();
    const intent = await stripe.setupIntents.retrieve(setupIntentId);
    const customerId = typeof intent.customer === 'string' ? intent.customer : intent.customer?.id;
    const paymentMethodId =
      typeof intent.payment_method === 'string' ? intent.payment_method : intent.payment_method?.id;
    if (!customerId || !paymentMethodId) return null;
    await stripe.customers.update(
      customerId,
      { invoice_settings: { default_payment_method: paymentMethodId } },
      { idempotencyKey: `default-payment-method:${setupIntentId}` },
    );
    return { customerId, paymentMethodId };
  }

  /** Verifies a webhook's signature with the signing secret and returns the event. */
  async constructEvent(payload: string, signature: string, secret: string): Promise<Stripe.Event> {
    const stripe = await this.stripe();
    return stripe.webhooks.constructEvent(payload, signature, secret);
  }
}
