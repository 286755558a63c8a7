import Stripe from 'stripe';
import { newId, unix } from './state';

/** A Stripe event with `object` as `data.object`, its raw JSON and a valid `Stripe-Signature` header. */
export function signedEvent(
  webhookSecret: string,
  type: string,
  object: Record<string, any>,
  options: { id?: string; secret?: string; timestamp?: number } = {},
): { event: Record<string, any>; rawBody: string; signature: string } {
  const event = {
    id: options.id ?? newId('evt'),
    object: 'event',
    api_version: '2025-01-27.acacia',
    created: unix(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
  const rawBody = JSON.stringify(event, null, 2);
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload: rawBody,
    secret: options.secret ?? webhookSecret,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
  return { event, rawBody, signature };
}
