import {
  customerOf,
  type DoubleCharge,
  type DoubleState,
  type InvoiceRecord,
  missing,
  newId,
  type Route,
  required,
  StripeHttpError,
  unix,
} from './state';

const itemsOf = (state: DoubleState, invoiceId: string) =>
  [...state.invoiceItems.values()].filter((item) => item.invoice === invoiceId);

/** The invoice as GET /v1/invoices/:id answers it, its lines being its invoice items. */
export function invoiceView(state: DoubleState, record: InvoiceRecord): Record<string, any> {
  const items = itemsOf(state, record.id);
  const total = items.reduce((sum, item) => sum + (item.amount as number), 0);
  const paid = record.status === 'paid';
  return {
    id: record.id,
    object: 'invoice',
    customer: record.customer,
    status: record.status,
    collection_method: record.collection_method,
    auto_advance: record.auto_advance,
    currency: 'usd',
    metadata: record.metadata,
    created: record.created,
    livemode: false,
    number: record.number,
    attempt_count: record.attempt_count,
    attempted: record.attempt_count > 0,
    subtotal: total,
    total,
    amount_due: total,
    amount_paid: paid ? total : 0,
    amount_remaining: paid ? 0 : total,
    hosted_invoice_url: record.hosted_invoice_url,
    lines: {
      object: 'list',
      data: items.map((item) => ({
        id: `il_${(item.id as string).slice(3)}`,
        object: 'line_item',
        amount: item.amount,
        currency: item.currency,
        description: item.description,
        invoice: record.id,
        quantity: 1,
      })),
      has_more: false,
      total_count: items.length,
      url: `/v1/invoices/${record.id}/lines`,
    },
  };
}

/** The invoice record, or 404 resource_missing. */
export function invoiceRecordOf(state: DoubleState, id: string): InvoiceRecord {
  const record = state.invoices.get(id);
  if (!record) throw missing('invoice', id, 'invoice');
  return record;
}

function finalize(state: DoubleState, record: InvoiceRecord): void {
  record.status = 'open';
  record.number = `DBL-${String(state.invoices.size).padStart(4, '0')}-${record.id.slice(-4)}`;
  record.hosted_invoice_url = `https://invoice.stripe.com/i/acct_double/${record.id}`;
}

/** Invoices: create, read, finalize, void, delete a draft, pay (a charge with the default card). */
export const invoiceRoutes = (state: DoubleState): Route[] => [
  {
    method: 'POST',
    pattern: /^\/v1\/invoices$/,
    run: (body) => {
      const customerId = required(body, 'customer');
      customerOf(state, customerId);
      const record: InvoiceRecord = {
        id: newId('in'),
        customer: customerId,
        status: 'draft',
        collection_method: body.collection_method ?? 'charge_automatically',
        auto_advance: body.auto_advance === 'true',
        metadata: body.metadata ?? {},
        created: unix(),
        attempt_count: 0,
        hosted_invoice_url: null,
        number: null,
        charge: null,
      };
      state.invoices.set(record.id, record);
      return { body: invoiceView(state, record) };
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/invoices\/([^/]+)$/,
    run: (_body, [id]) => ({ body: invoiceView(state, invoiceRecordOf(state, id!)) }),
  },
  {
    method: 'POST',
    pattern: /^\/v1\/invoices\/([^/]+)\/finalize$/,
    run: (_body, [id]) => {
      const record = invoiceRecordOf(state, id!);
      if (record.status !== 'draft') {
        throw new StripeHttpError(400, {
          type: 'invalid_request_error',
          code: 'invoice_not_editable',
          message: "This invoice is already finalized, you can't re-finalize a non-draft invoice.",
        });
      }
      finalize(state, record);
      return { body: invoiceView(state, record) };
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/invoices\/([^/]+)\/void$/,
    run: (_body, [id]) => {
      const record = invoiceRecordOf(state, id!);
      // Like Stripe: only a finalized, unpaid invoice can be voided (a draft is deleted instead).
      if (record.status !== 'open') {
        throw new StripeHttpError(400, {
          type: 'invalid_request_error',
          code: 'invoice_not_editable',
          message: `You can only void an open invoice; this one is ${record.status}.`,
        });
      }
      record.status = 'void';
      return { body: invoiceView(state, record) };
    },
  },
  {
    method: 'DELETE',
    pattern: /^\/v1\/invoices\/([^/]+)$/,
    run: (_body, [id]) => {
      const record = invoiceRecordOf(state, id!);
      if (record.status !== 'draft')
        throw new StripeHttpError(400, {
          type: 'invalid_request_error',
          code: 'invoice_not_editable',
          message: 'Only draft invoices can be deleted.',
        });
      state.invoices.delete(id!);
      return { body: { id, object: 'invoice', deleted: true } };
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/invoices\/([^/]+)\/pay$/,
    run: (_body, [id]) => {
      const record = invoiceRecordOf(state, id!);
      if (record.status === 'paid')
        throw new StripeHttpError(400, { type: 'invalid_request_error', message: 'Invoice is already paid' });
      if (record.status === 'void')
        throw new StripeHttpError(400, {
          type: 'invalid_request_error',
          code: 'invoice_not_editable',
          message: 'This invoice is void and cannot be paid.',
        });
      if (record.status === 'draft') finalize(state, record);
      const amount = invoiceView(state, record).amount_due as number;
      if (amount > 0) {
        const card = state.cards.get(record.customer);
        // Like Stripe: an invoice is collected with the customer's default payment method only.
        if (
          !card ||
          customerOf(state, record.customer).invoice_settings?.default_payment_method !== card.paymentMethodId
        ) {
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            code: 'invoice_no_customer_payment_method',
            message:
              'This customer has no attached payment source or default payment method. Please consider adding a default payment method.',
          });
        }
        record.attempt_count += 1;
        const charge: DoubleCharge = {
          id: newId('ch'),
          object: 'charge',
          customer: record.customer,
          invoice: record.id,
          amount,
          currency: 'usd',
          status: card.declines ? 'failed' : 'succeeded',
          paid: !card.declines,
        };
        state.charges.push(charge);
        if (card.declines) {
          throw new StripeHttpError(402, {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'generic_decline',
            message: 'Your card was declined.',
          });
        }
        record.charge = charge.id;
      }
      record.status = 'paid';
      return { body: invoiceView(state, record) };
    },
  },
];

/** POST /v1/invoiceitems: a line on a draft invoice of the same customer. */
export const invoiceItemRoutes = (state: DoubleState): Route[] => [
  {
    method: 'POST',
    pattern: /^\/v1\/invoiceitems$/,
    run: (body) => {
      const customerId = required(body, 'customer');
      customerOf(state, customerId);
      const amount = Number(required(body, 'amount'));
      if (!Number.isInteger(amount)) {
        throw new StripeHttpError(400, {
          type: 'invalid_request_error',
          code: 'parameter_invalid_integer',
          param: 'amount',
          message: 'Invalid integer: amount',
        });
      }
      let invoiceId: string | null = null;
      if (body.invoice) {
        const record = invoiceRecordOf(state, body.invoice);
        if (record.customer !== customerId) {
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            param: 'invoice',
            message: 'The invoice belongs to another customer.',
          });
        }
        if (record.status !== 'draft') {
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            code: 'invoice_not_editable',
            param: 'invoice',
            message: 'You can only add invoice items to draft state.invoices.',
          });
        }
        invoiceId = record.id;
      }
      const item = {
        id: newId('ii'),
        object: 'invoiceitem',
        customer: customerId,
        invoice: invoiceId,
        amount,
        currency: required(body, 'currency'),
        description: body.description ?? null,
        date: unix(),
        livemode: false,
      };
      state.invoiceItems.set(item.id, item);
      return { body: item };
    },
  },
];
