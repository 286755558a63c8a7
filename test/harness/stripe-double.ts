import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { overrideConfig } from '../../lib/config';

/**
 * A local stand-in for the Stripe API, just the endpoints our adapter (lib/billing/processor/stripe.ts)
 * calls, in Stripe's wire format: form-encoded bodies with bracket notation in, JSON objects with
 * `object` fields out, errors as `{ error: { type, code, message } }` with the statuses the official
 * SDK maps to its error classes (402 StripeCardError, 400/404 StripeInvalidRequestError). The real
 * SDK talks to it (`STRIPE_API_BASE`), so its retries and idempotency keys are exercised for real.
 *
 * Idempotency-Key is honoured like Stripe does: a repeat with the same key and parameters replays the
 * first answer (header `Idempotent-Replayed: true`) without a second effect; the same key with other
 * parameters is 400 idempotency_error. Every request is recorded for assertions.
 */

export const DOUBLE_WEBHOOK_SECRET = 'whsec_test_double_0123456789abcdef';
export const DOUBLE_SECRET_KEY = 'sk_test_double_0123456789abcdef';

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  body: Record<string, any>;
  /** The answer's HTTP status; `dropped` when the connection was destroyed instead. */
  status: number | 'dropped';
  /** The answer came from the idempotency store (no second effect). */
  replayed: boolean;
}

/** How an injected failure behaves: drop before or after the request takes effect, or answer 500 without effect. */
export type FailureMode = 'drop-before' | 'drop-after' | 500;

interface FailureRule {
  method: string;
  pattern: RegExp;
  remaining: number;
  mode: FailureMode;
}

interface Card {
  paymentMethodId: string;
  last4: string;
  declines: boolean;
}

interface InvoiceRecord {
  id: string;
  customer: string;
  status: 'draft' | 'open' | 'paid' | 'void';
  collection_method: string;
  auto_advance: boolean;
  metadata: Record<string, string>;
  created: number;
  attempt_count: number;
  hosted_invoice_url: string | null;
  number: string | null;
  charge: string | null;
}

export interface DoubleCharge {
  id: string;
  object: 'charge';
  customer: string;
  invoice: string;
  amount: number;
  currency: 'usd';
  status: 'succeeded' | 'failed';
  paid: boolean;
}

class StripeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: { type: string; code?: string; message: string; param?: string; decline_code?: string },
  ) {
    super(error.message);
  }
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const unix = () => Math.floor(Date.now() / 1000);

/** `a[b][0]=x&c=y` into `{ a: { b: ['x'] }, c: 'y' }`, the way Stripe reads form bodies. */
export function parseStripeForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: any = root;
    for (const [index, part] of parts.entries()) {
      const last = index === parts.length - 1;
      if (last) {
        if (Array.isArray(node) && part === '') node.push(value);
        else node[part] = value;
      } else {
        node[part] ??= /^\d*$/.test(parts[index + 1]!) ? [] : {};
        node = node[part];
      }
    }
  }
  return root;
}

function pathPattern(path: string | RegExp): RegExp {
  if (path instanceof RegExp) return path;
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}

function missing(kind: string, id: string, param = 'id'): StripeHttpError {
  return new StripeHttpError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${kind}: '${id}'`,
  });
}

function required(body: Record<string, any>, param: string): string {
  const value = body[param];
  if (typeof value !== 'string' || value === '') {
    throw new StripeHttpError(400, {
      type: 'invalid_request_error',
      code: 'parameter_missing',
      param,
      message: `Missing required param: ${param}.`,
    });
  }
  return value;
}

export interface StripeDouble {
  /** Base URL for STRIPE_API_BASE. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly customers: Map<string, Record<string, any>>;
  readonly checkoutSessions: Map<string, Record<string, any>>;
  readonly invoiceItems: Map<string, Record<string, any>>;
  readonly charges: DoubleCharge[];
  /** Requests to `path` (`:id` matches one segment) with `method`, oldest first. */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  /** The invoice as GET /v1/invoices/:id answers it, or undefined. */
  invoice(id: string): Record<string, any> | undefined;
  /** Invoices of a customer, oldest first, in wire format. */
  invoicesOf(customerId: string): Array<Record<string, any>>;
  /** Saves a card on the customer as its default payment method; returns the payment_method object. */
  /** Saves a card on the customer; `asDefault: false` is what setup Checkout does (attached, not the invoice default). */
  attachCard(
    customerId: string,
    card?: { last4?: string; declines?: boolean; asDefault?: boolean },
  ): Record<string, any>;
  /** The next `times` requests matching `method` and `path` fail in the given way. */
  failNext(path: string | RegExp, times: number, mode?: FailureMode, method?: string): void;
  clearFailures(): void;
  /** A Stripe event with `object` as `data.object`, its raw JSON and a valid `Stripe-Signature` header. */
  signedEvent(
    type: string,
    object: Record<string, any>,
    options?: { id?: string; secret?: string; timestamp?: number },
  ): { event: Record<string, any>; rawBody: string; signature: string };
  close(): Promise<void>;
}

/** Starts the double on a free port of 127.0.0.1. */
export async function startStripeDouble(options: { webhookSecret?: string } = {}): Promise<StripeDouble> {
  const webhookSecret = options.webhookSecret ?? DOUBLE_WEBHOOK_SECRET;
  const requests: RecordedRequest[] = [];
  const customers = new Map<string, Record<string, any>>();
  const cards = new Map<string, Card>();
  const checkoutSessions = new Map<string, Record<string, any>>();
  const invoices = new Map<string, InvoiceRecord>();
  const invoiceItems = new Map<string, Record<string, any>>();
  const charges: DoubleCharge[] = [];
  const idempotent = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  let failures: FailureRule[] = [];

  const itemsOf = (invoiceId: string) => [...invoiceItems.values()].filter((item) => item.invoice === invoiceId);

  function invoiceView(record: InvoiceRecord): Record<string, any> {
    const items = itemsOf(record.id);
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

  function invoiceRecord(id: string): InvoiceRecord {
    const record = invoices.get(id);
    if (!record) throw missing('invoice', id, 'invoice');
    return record;
  }

  function customer(id: string, param = 'customer'): Record<string, any> {
    const found = customers.get(id);
    if (!found) throw missing('customer', id, param);
    return found;
  }

  function finalize(record: InvoiceRecord): void {
    record.status = 'open';
    record.number = `DBL-${String(invoices.size).padStart(4, '0')}-${record.id.slice(-4)}`;
    record.hosted_invoice_url = `https://invoice.stripe.com/i/acct_double/${record.id}`;
  }

  const routes: Array<{
    method: string;
    pattern: RegExp;
    run: (body: Record<string, any>, params: string[]) => { status?: number; body: unknown };
  }> = [
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
        customers.set(created.id, created);
        return { body: created };
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/customers\/([^/]+)$/,
      run: (_body, [id]) => ({ body: customer(id!, 'id') }),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/customers\/([^/]+)$/,
      run: (body, [id]) => {
        const found = customer(id!, 'id');
        const wanted = body.invoice_settings?.default_payment_method;
        if (wanted !== undefined) {
          if (cards.get(id!)?.paymentMethodId !== wanted)
            throw missing('payment_method', wanted, 'invoice_settings[default_payment_method]');
          found.invoice_settings = { default_payment_method: wanted };
        }
        return { body: found };
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/setup_intents\/([^/]+)$/,
      run: (_body, [id]) => {
        const session = [...checkoutSessions.values()].find((s) => s.setup_intent === id);
        if (!session) throw missing('setup_intent', id!, 'intent');
        const card = cards.get(session.customer);
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
        if (body.customer) customer(body.customer);
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
        checkoutSessions.set(id, session);
        return { body: session };
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/invoices$/,
      run: (body) => {
        const customerId = required(body, 'customer');
        customer(customerId);
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
        invoices.set(record.id, record);
        return { body: invoiceView(record) };
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/invoices\/([^/]+)$/,
      run: (_body, [id]) => ({ body: invoiceView(invoiceRecord(id!)) }),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/invoiceitems$/,
      run: (body) => {
        const customerId = required(body, 'customer');
        customer(customerId);
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
          const record = invoiceRecord(body.invoice);
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
              message: 'You can only add invoice items to draft invoices.',
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
        invoiceItems.set(item.id, item);
        return { body: item };
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/invoices\/([^/]+)\/finalize$/,
      run: (_body, [id]) => {
        const record = invoiceRecord(id!);
        if (record.status !== 'draft') {
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            code: 'invoice_not_editable',
            message: "This invoice is already finalized, you can't re-finalize a non-draft invoice.",
          });
        }
        finalize(record);
        return { body: invoiceView(record) };
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/invoices\/([^/]+)\/void$/,
      run: (_body, [id]) => {
        const record = invoiceRecord(id!);
        // Like Stripe: only a finalized, unpaid invoice can be voided (a draft is deleted instead).
        if (record.status !== 'open') {
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            code: 'invoice_not_editable',
            message: `You can only void an open invoice; this one is ${record.status}.`,
          });
        }
        record.status = 'void';
        return { body: invoiceView(record) };
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/invoices\/([^/]+)$/,
      run: (_body, [id]) => {
        const record = invoiceRecord(id!);
        if (record.status !== 'draft')
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            code: 'invoice_not_editable',
            message: 'Only draft invoices can be deleted.',
          });
        invoices.delete(id!);
        return { body: { id, object: 'invoice', deleted: true } };
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/invoices\/([^/]+)\/pay$/,
      run: (_body, [id]) => {
        const record = invoiceRecord(id!);
        if (record.status === 'paid')
          throw new StripeHttpError(400, { type: 'invalid_request_error', message: 'Invoice is already paid' });
        if (record.status === 'void')
          throw new StripeHttpError(400, {
            type: 'invalid_request_error',
            code: 'invoice_not_editable',
            message: 'This invoice is void and cannot be paid.',
          });
        if (record.status === 'draft') finalize(record);
        const amount = invoiceView(record).amount_due as number;
        if (amount > 0) {
          const card = cards.get(record.customer);
          // Like Stripe: an invoice is collected with the customer's default payment method only.
          if (!card || customer(record.customer).invoice_settings?.default_payment_method !== card.paymentMethodId) {
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
          charges.push(charge);
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
        return { body: invoiceView(record) };
      },
    },
  ];

  async function readBody(request: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  function send(response: ServerResponse, status: number, body: unknown, replayed: boolean): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'request-id': newId('req'),
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    response.end(text);
  }

  /** Runs the endpoint; an error the endpoint raised is an answer too (and is stored for replays, as Stripe does). */
  function execute(method: string, path: string, body: Record<string, any>): { status: number; body: unknown } {
    const route = routes.find((r) => r.method === method && r.pattern.test(path));
    if (!route) {
      return {
        status: 404,
        body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } },
      };
    }
    try {
      const result = route.run(body, route.pattern.exec(path)!.slice(1));
      return { status: result.status ?? 200, body: result.body };
    } catch (error) {
      if (error instanceof StripeHttpError) return { status: error.status, body: { error: error.error } };
      throw error;
    }
  }

  const server = createServer((request, response) => {
    void (async () => {
      const method = request.method ?? 'GET';
      const url = new URL(request.url ?? '/', 'http://double.local');
      const raw = await readBody(request);
      const body = method === 'GET' ? parseStripeForm(url.search.slice(1)) : parseStripeForm(raw);
      const idempotencyKey =
        typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined;
      const record: RecordedRequest = {
        method,
        path: url.pathname,
        idempotencyKey,
        body,
        status: 'dropped',
        replayed: false,
      };
      requests.push(record);

      if (!/^Bearer sk_/.test(request.headers.authorization ?? '')) {
        record.status = 401;
        send(response, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } }, false);
        return;
      }

      const rule = failures.find((f) => f.remaining > 0 && f.method === method && f.pattern.test(url.pathname));
      if (rule) rule.remaining -= 1;
      if (rule?.mode === 'drop-before') {
        request.socket.destroy();
        return;
      }
      if (rule?.mode === 500) {
        record.status = 500;
        send(
          response,
          500,
          { error: { type: 'api_error', message: 'An unknown error occurred while processing your request.' } },
          false,
        );
        return;
      }

      const fingerprint = `${method} ${url.pathname} ${raw}`;
      const stored = idempotencyKey && method === 'POST' ? idempotent.get(idempotencyKey) : undefined;
      let answer: { status: number; body: unknown };
      if (stored && stored.fingerprint !== fingerprint) {
        answer = {
          status: 400,
          body: {
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            },
          },
        };
      } else if (stored) {
        answer = { status: stored.status, body: stored.body };
        record.replayed = true;
      } else {
        answer = execute(method, url.pathname, body);
        if (idempotencyKey && method === 'POST')
          idempotent.set(idempotencyKey, { fingerprint, status: answer.status, body: answer.body });
      }

      if (rule?.mode === 'drop-after') {
        // The request took effect; the answer is lost on the way back.
        request.socket.destroy();
        return;
      }
      record.status = answer.status;
      send(response, answer.status, answer.body, record.replayed);
    })().catch((error) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { type: 'api_error', message: `stripe double: ${(error as Error).message}` } }),
      );
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    customers,
    checkoutSessions,
    invoiceItems,
    charges,
    requestsTo: (method, path) => {
      const pattern = pathPattern(path);
      return requests.filter((r) => r.method === method && pattern.test(r.path));
    },
    invoice: (id) => {
      const record = invoices.get(id);
      return record ? invoiceView(record) : undefined;
    },
    invoicesOf: (customerId) => [...invoices.values()].filter((r) => r.customer === customerId).map(invoiceView),
    attachCard: (customerId, card = {}) => {
      const owner = customers.get(customerId);
      if (!owner) throw new Error(`stripe double: no customer ${customerId}`);
      const last4 = card.last4 ?? '4242';
      const paymentMethodId = newId('pm');
      cards.set(customerId, { paymentMethodId, last4, declines: card.declines ?? false });
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
    },
    failNext: (path, times, mode = 'drop-before', method = 'POST') => {
      failures.push({ method, pattern: pathPattern(path), remaining: times, mode });
    },
    clearFailures: () => {
      failures = [];
    },
    signedEvent: (type, object, eventOptions = {}) => {
      const event = {
        id: eventOptions.id ?? newId('evt'),
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
        secret: eventOptions.secret ?? webhookSecret,
        ...(eventOptions.timestamp ? { timestamp: eventOptions.timestamp } : {}),
      });
      return { event, rawBody, signature };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * The file's tests run against one double: started before them and closed after; before each test
 * the service is configured to call it (key, API base, webhook secret) with a fresh Stripe adapter;
 * after each, the configuration is restored and injected failures are cleared.
 */
export function useStripeDouble(): StripeDouble {
  let double: StripeDouble | undefined;
  let restoreConfig: (() => void) | undefined;
  beforeAll(async () => {
    double = await startStripeDouble();
  });
  afterAll(async () => {
    await double?.close();
  });
  beforeEach(() => {
    restoreConfig = overrideConfig({
      STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY,
      STRIPE_API_BASE: double!.url,
      STRIPE_WEBHOOK_SECRET: DOUBLE_WEBHOOK_SECRET,
    });
    // The next paymentProcessor() builds a fresh Stripe adapter from this config.
    usePaymentProcessor(undefined);
  });
  afterEach(() => {
    restoreConfig?.();
    restoreConfig = undefined;
    usePaymentProcessor(undefined);
    double?.clearFailures();
  });
  // The double exists once beforeAll has run; until then the tests only hold this stand-in.
  return new Proxy({} as StripeDouble, {
    get(_target, key) {
      if (!double) throw new Error('useStripeDouble: the double starts in beforeAll');
      const value = Reflect.get(double, key);
      return typeof value === 'function' ? value.bind(double) : value;
    },
  });
}
