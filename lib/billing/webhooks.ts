import type Stripe from 'stripe';
import { config } from '../config';
import { lazyRetrying } from '../lazy';
import { processedWebhookEvents } from '../db/schema/billing';
import { transaction } from '../db/transaction';
import { settleInvoice } from './settle-invoice';
import { InvalidSignatureError, MissingSignatureError, WebhooksNotConfiguredError } from './errors';
import { recordPaymentMethod } from './payment-methods';
import { paymentProcessor } from './processor';

/**
 * The SDK's signature check needs a client; no API call is made with it (so the key it was made
 * with does not matter). A failed import is tried again on the next call.
 */
const stripeVerifier = lazyRetrying(() =>
  import('stripe').then(
    ({ default: StripeClient }) => new StripeClient(config().STRIPE_SECRET_KEY ?? 'sk_webhook_verification_only'),
  ),
);

const customerIdOf = (value: string | { id: string } | null | undefined) =>
  typeof value === 'string' ? value : (value?.id ?? null);

/**
 * POST /webhooks/stripe: verifies the signature over the raw body, then applies the event once
 * (its id is recorded in the same transaction, so a replay has no second effect). An event that
 * changes an organization's billing records one audit event there, by the system; a replay, or an
 * event about nothing of ours, records none.
 */
export async function stripeWebhook(input: {
  rawBody: string | undefined;
  signature: string | undefined;
}): Promise<{ received: true; duplicate: boolean }> {
  const { rawBody, signature } = input;
  // Cloud: the signing secret as in STRIPE_SECRET_ARN now (read again past its time-to-live).
  if (config().STRIPE_SECRET_ARN) await (await import('../aws/secrets')).loadCloudSecrets();
  const secret = config().STRIPE_WEBHOOK_SECRET;
  if (!secret) throw new WebhooksNotConfiguredError();
  if (!rawBody || !signature) throw new MissingSignatureError();
  let event: Stripe.Event;
  try {
    event = (await stripeVerifier()).webhooks.constructEvent(rawBody, signature, secret);
  } catch {
    throw new InvalidSignatureError();
  }
  // A saved card must become the invoice default before open invoices are collected. Done before
  // the transaction (a Stripe call) and idempotent, so a replay repeats it harmlessly.
  if (
    event.type === 'checkout.session.completed' &&
    event.data.object.mode === 'setup' &&
    event.data.object.setup_intent
  ) {
    const processor = await paymentProcessor();
    // Imported here rather than at the top: a static import would put the adapter, and with it the
    // Stripe SDK's chunk, into every bundle that reaches lib/billing (infra/bundling splits).
    const { StripeProcessor } = await import('./processor/stripe');
    const intent = event.data.object.setup_intent;
    if (processor instanceof StripeProcessor)
      await processor.makeSetupIntentCardDefault(typeof intent === 'string' ? intent : intent.id);
  }
  const duplicate = await transaction(async (tx, afterCommit) => {
    const [fresh] = await tx
      .insert(processedWebhookEvents)
      .values({ eventId: event.id, type: event.type })
      .onConflictDoNothing()
      .returning();
    if (!fresh) return true;
    const report = { type: event.type, processorEventId: event.id };
    switch (event.type) {
      case 'invoice.paid':
        await settleInvoice(tx, event.data.object.id!, 'paid', report);
        break;
      case 'invoice.payment_failed':
        await settleInvoice(tx, event.data.object.id!, 'failed', report);
        break;
      case 'checkout.session.completed': {
        const session = event.data.object;
        const customerId = customerIdOf(session.customer);
        if (session.mode === 'setup' && customerId)
          await recordPaymentMethod(tx, afterCommit, customerId, null, report);
        break;
      }
      case 'payment_method.attached': {
        const method = event.data.object;
        const customerId = customerIdOf(method.customer);
        if (customerId) await recordPaymentMethod(tx, afterCommit, customerId, method.card?.last4 ?? null, report);
        break;
      }
      default:
        break;
    }
    return false;
  });
  return { received: true, duplicate };
}
