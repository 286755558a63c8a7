import { customerOf, type DoubleState, missing, newId, type Route, unix } from './state';

/** POST /v1/customers, GET and POST /v1/customers/:id (the invoice default payment method). */
export const customerRoutes = (state: DoubleState): Route[] => [
  {
    method: 'POST',
    pattern: /^\/v1\/customers$/,
    run: (body) => {
      const created = {
        id: newId('cus'),
        object: 'customer',
        created: unix(),
        livemode: false,
        name: body.name ?? null,
        email: body.email ?? null,
        metadata: body.metadata ?? {},
        invoice_settings: { default_payment_method: null },
      };
      state.customers.set(created.id, created);
      return { body: created };
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/customers\/([^/]+)$/,
    run: (_body, [id]) => ({ body: customerOf(state, id!, 'id') }),
  },
  {
    method: 'POST',
    pattern: /^\/v1\/customers\/([^/]+)$/,
    run: (body, [id]) => {
      const found = customerOf(state, id!, 'id');
      const wanted = body.invoice_settings?.default_payment_method;
      if (wanted !== undefined) {
        if (state.cards.get(id!)?.paymentMethodId !== wanted)
          throw missing('payment_method', wanted, 'invoice_settings[default_payment_method]');
        found.invoice_settings = { default_payment_method: wanted };
      }
      return { body: found };
    },
  },
];

/** Saves a card on the customer; `asDefault: false` is what setup Checkout does (attached, not the invoice default). */
export function attachCard(
  state: DoubleState,
  customerId: string,
  card: { last4?: string; declines?: boolean; asDefault?: boolean } = {},
): Record<string, any> {
  const owner = state.customers.get(customerId);
  if (!owner) throw new Error(`stripe double: no customer ${customerId}`);
  const last4 = card.last4 ?? '4242';
  const paymentMethodId = newId('pm');
  state.cards.set(customerId, { paymentMethodId, last4, declines: card.declines ?? false });
  if (card.asDefault ?? true) owner.invoice_settings = { default_payment_method: paymentMethodId };
  return {
    id: paymentMethodId,
    object: 'payment_method',
    type: 'card',
    customer: customerId,
    created: unix(),
    livemode: false,
    card: {
      brand: 'visa',
      last4,
      exp_month: 12,
      exp_year: new Date().getUTCFullYear() + 3,
      country: 'US',
      funding: 'credit',
    },
    billing_details: { email: owner.email, name: owner.name },
  };
}
