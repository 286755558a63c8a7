import { randomBytes } from 'node:crypto';
import { customerOf, type DoubleState, missing, newId, type Route, required, StripeHttpError } from './state';

/** GET /v1/setup_intents/:id (what a setup checkout made) and POST /v1/checkout/sessions. */
export const checkoutRoutes = (state: DoubleState): Route[] => [
  {
    method: 'GET',
    pattern: /^\/v1\/setup_intents\/([^/]+)$/,
    run: (_body, [id]) => {
      const session = [...state.checkoutSessions.values()].find((s) => s.setup_intent === id);
      if (!session) throw missing('setup_intent', id!, 'intent');
      const card = state.cards.get(session.customer);
      return {
        body: {
          id,
          object: 'setup_intent',
          customer: session.customer,
          status: card ? 'succeeded' : 'requires_payment_method',
          payment_method: card?.paymentMethodId ?? null,
        },
      };
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/checkout\/sessions$/,
    run: (body) => {
      const mode = required(body, 'mode');
      if (!['setup', 'payment', 'subscription'].includes(mode)) {
        throw new StripeHttpError(400, {
          type: 'invalid_request_error',
          code: 'parameter_invalid_empty',
          param: 'mode',
          message: `Invalid mode: ${mode}`,
        });
      }
      if (body.customer) customerOf(state, body.customer);
      const id = `cs_test_${randomBytes(16).toString('hex')}`;
      const session = {
        id,
        object: 'checkout.session',
        mode,
        status: 'open',
        customer: body.customer ?? null,
        currency: body.currency ?? null,
        success_url: required(body, 'success_url'),
        cancel_url: body.cancel_url ?? null,
        setup_intent: mode === 'setup' ? newId('seti') : null,
        livemode: false,
        url: `https://checkout.stripe.com/c/pay/${id}`,
      };
      state.checkoutSessions.set(id, session);
      return { body: session };
    },
  },
];
