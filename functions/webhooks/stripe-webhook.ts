import { stripeWebhook } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { StripeWebhookResponseEntity } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** POST /webhooks/stripe: signature verified over the raw body; replays have no second effect. */
export const handler = endpoint(
  routes.stripeWebhook,
  { response: StripeWebhookResponseEntity },
  ({ rawBody, headers }) => stripeWebhook({ rawBody, signature: headers['stripe-signature'] }),
);
