import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { BILLING_HISTORY_CATEGORIES } from '../../billing/history-categories';
import { BILLING_ROW_STATUSES } from '../../billing/billing-row-lifecycle';
import { id, timestamps, timestamptz } from '../columns';
import { cases } from './cases';
import { organizations } from './organizations';
import { users } from './users';

/**
 * The append-only billing ledger: one row per charge, credit line or informational line, in
 * integer cents. Rows change status as invoices settle; they are never deleted.
 */
export const billingRows = pgTable(
  'billing_rows',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** null: an organization-wide (platform) charge such as the plan base fee. */
    caseId: uuid('case_id').references(() => cases.id, { onDelete: 'set null' }),
    skuKey: text('sku_key').notNull(),
    description: text('description').notNull(),
    quantity: integer('quantity').notNull(),
    unitAmountCents: integer('unit_amount_cents').notNull(),
    amountCents: integer('amount_cents').notNull(),
    /** processing -> INVOICED -> paid | failed; the moves: lib/billing/billing-row-lifecycle.ts. */
    status: text('status', { enum: BILLING_ROW_STATUSES }).notNull(),
    informational: boolean('informational').notNull().default(false),
    /** Part of the amount paid from the organization's credits. */
    creditsAppliedCents: integer('credits_applied_cents').notNull().default(0),
    /** Processor invoice of the part charged to the card; set once invoiced. */
    invoiceId: text('invoice_id'),
    hostedInvoiceUrl: text('hosted_invoice_url'),
    /**
     * Voided rows with an invoice: when the processor confirmed the invoice void (or that it was
     * paid first, the payment then kept as credit). Null until then; maintenance retries.
     */
    invoiceClosedAt: timestamptz('invoice_closed_at'),
    /** Makes every charge idempotent: a repeat of the same request finds this row. */
    idempotencyKey: text('idempotency_key').notNull(),
    /** Rows invoiced together (a base fee and its proration credit) share this key. */
    chargeKey: text('charge_key').notNull(),
    periodStart: timestamptz('period_start'),
    periodEnd: timestamptz('period_end'),
    createdById: uuid('created_by_id').references(() => users.id, { onDelete: 'set null' }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('billing_rows_idempotency_key').on(t.idempotencyKey),
    index('billing_rows_organization_created_idx').on(t.organizationId, t.createdAt),
    index('billing_rows_case_idx').on(t.caseId, t.createdAt),
    index('billing_rows_invoice_idx').on(t.invoiceId),
    index('billing_rows_charge_key_idx').on(t.chargeKey),
  ],
);

/** Every change of an organization's credit balance; the entries always sum to the balance. */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    amountCents: integer('amount_cents').notNull(),
    balanceAfterCents: integer('balance_after_cents').notNull(),
    kind: text('kind', { enum: ['grant', 'purchase', 'charge', 'refund', 'proration'] }).notNull(),
    description: text('description').notNull(),
    billingRowId: uuid('billing_row_id').references(() => billingRows.id, { onDelete: 'set null' }),
    /** Set on entries that must happen once (a payment kept as credit after its charge was voided). */
    idempotencyKey: text('idempotency_key'),
    ...timestamps,
  },
  (t) => [
    index('credit_ledger_organization_idx').on(t.organizationId, t.createdAt),
    check('credit_ledger_balance_nonnegative', sql`${t.balanceAfterCents} >= 0`),
    uniqueIndex('credit_ledger_idempotency_key').on(t.idempotencyKey),
  ],
);

/** Audit trail of every billing change, by category. */
export const billingHistory = pgTable(
  'billing_history',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    category: text('category', { enum: BILLING_HISTORY_CATEGORIES }).notNull(),
    caseId: uuid('case_id').references(() => cases.id, { onDelete: 'set null' }),
    description: text('description').notNull(),
    reason: text('reason'),
    createdById: uuid('created_by_id').references(() => users.id, { onDelete: 'set null' }),
    /** Made by operator staff: shown with a neutral description, no reason and no creator. */
    byStaff: boolean('by_staff').notNull().default(false),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
  },
  (t) => [index('billing_history_organization_idx').on(t.organizationId, t.createdAt)],
);

/** Webhook events already handled, so a replay has no second effect. */
export const processedWebhookEvents = pgTable('processed_webhook_events', {
  eventId: text('event_id').primaryKey(),
  type: text('type').notNull(),
  ...timestamps,
});

/** Customers of the offline sandbox payment processor (the local default when Stripe is not configured). */
export const sandboxCustomers = pgTable('sandbox_customers', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  organizationId: text('organization_id').notNull(),
  /** The attached card: `pm_sandbox_...`; a card ending 0002 is declined. */
  defaultPaymentMethod: text('default_payment_method'),
  cardLast4: text('card_last4'),
  ...timestamps,
});

export const sandboxCheckoutSessions = pgTable('sandbox_checkout_sessions', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull(),
  successUrl: text('success_url').notNull(),
  cancelUrl: text('cancel_url').notNull(),
  status: text('status', { enum: ['open', 'complete', 'expired'] }).notNull(),
  idempotencyKey: text('idempotency_key').notNull().unique(),
  ...timestamps,
});

export const sandboxInvoices = pgTable('sandbox_invoices', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull(),
  amountCents: integer('amount_cents').notNull(),
  status: text('status', { enum: ['open', 'paid', 'uncollectible', 'void'] }).notNull(),
  lines: jsonb('lines').$type<Array<{ description: string; amountCents: number }>>().notNull(),
  idempotencyKey: text('idempotency_key').notNull().unique(),
  ...timestamps,
});
