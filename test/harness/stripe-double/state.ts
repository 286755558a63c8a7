import { randomBytes } from 'node:crypto';

/**
 * What the Stripe double holds, shared by its resources (customers, checkout, invoices, ...): each
 * resource file gets this state passed in and returns the routes it serves.
 */

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

export interface FailureRule {
  method: string;
  pattern: RegExp;
  remaining: number;
  mode: FailureMode;
}

export interface Card {
  paymentMethodId: string;
  last4: string;
  declines: boolean;
}

export interface InvoiceRecord {
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

/** Everything the double has been told and has made, for its routes and for assertions. */
export interface DoubleState {
  requests: RecordedRequest[];
  customers: Map<string, Record<string, any>>;
  /** The card saved on each customer, by customer id. */
  cards: Map<string, Card>;
  checkoutSessions: Map<string, Record<string, any>>;
  invoices: Map<string, InvoiceRecord>;
  invoiceItems: Map<string, Record<string, any>>;
  charges: DoubleCharge[];
  idempotent: Map<string, { fingerprint: string; status: number; body: unknown }>;
  failures: FailureRule[];
}

export const createState = (): DoubleState => ({
  requests: [],
  customers: new Map(),
  cards: new Map(),
  checkoutSessions: new Map(),
  invoices: new Map(),
  invoiceItems: new Map(),
  charges: [],
  idempotent: new Map(),
  failures: [],
});

/** One endpoint: its method, its path pattern (groups are the path's ids) and what it does. */
export interface Route {
  method: string;
  pattern: RegExp;
  run: (body: Record<string, any>, params: string[]) => { status?: number; body: unknown };
}

/** An error the endpoint answers, in Stripe's shape and with the status the SDK maps to its error class. */
export class StripeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: { type: string; code?: string; message: string; param?: string; decline_code?: string },
  ) {
    super(error.message);
  }
}

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
export const unix = () => Math.floor(Date.now() / 1000);

export function missing(kind: string, id: string, param = 'id'): StripeHttpError {
  return new StripeHttpError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${kind}: '${id}'`,
  });
}

export function required(body: Record<string, any>, param: string): string {
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

/** The customer, or 404 resource_missing naming `param`. */
export function customerOf(state: DoubleState, id: string, param = 'customer'): Record<string, any> {
  const found = state.customers.get(id);
  if (!found) throw missing('customer', id, param);
  return found;
}
