import { type SQL, sql } from 'drizzle-orm';

/**
 * The life of a billing row (`billing_rows.status`), in one place: the column's values, the moves
 * between them, and the groups that reports, sums and queries count by.
 *
 *   processing ── invoiced at the processor ──> INVOICED ──> paid | failed
 *   processing ── credits (or a net credit) cover it ──> paid
 *   failed ── collected later (card saved, webhook) ──> paid
 *   processing | INVOICED | failed ── a plan change replaces the unpaid base fee ──> voided
 *
 * `plan_included` (Pro through the plan, informational), `waived` and `refunded` are written as
 * they are and never move. Upper-case INVOICED is the stored spelling, kept as it is.
 */
export const BILLING_ROW_STATUSES = [
  'processing',
  'INVOICED',
  'paid',
  'failed',
  'plan_included',
  'waived',
  'voided',
  'refunded',
] as const;

export type BillingRowStatus = (typeof BILLING_ROW_STATUSES)[number];

/** The statuses by name, so code says `BILLING_ROW_STATUS.invoiced` rather than a string. */
export const BILLING_ROW_STATUS = {
  processing: 'processing',
  invoiced: 'INVOICED',
  paid: 'paid',
  failed: 'failed',
  planIncluded: 'plan_included',
  waived: 'waived',
  voided: 'voided',
  refunded: 'refunded',
} as const satisfies Record<string, BillingRowStatus>;

/** Where each status may go next; the statuses that are not listed as a source are final. */
export const BILLING_ROW_TRANSITIONS: Readonly<Record<BillingRowStatus, readonly BillingRowStatus[]>> = {
  processing: ['INVOICED', 'paid', 'failed', 'voided'],
  INVOICED: ['paid', 'failed', 'voided'],
  paid: [],
  failed: ['paid', 'voided'],
  plan_included: [],
  waived: [],
  voided: [],
  refunded: [],
};

/** Whether a row in `from` may move to `to`. */
export const mayMove = (from: BillingRowStatus, to: BillingRowStatus): boolean =>
  BILLING_ROW_TRANSITIONS[from].includes(to);

/** The statuses a row may be in to move to `to`, in the column's order (the order queries list them in). */
export const statusesThatMayBecome = (to: BillingRowStatus): BillingRowStatus[] =>
  BILLING_ROW_STATUSES.filter((from) => mayMove(from, to));

/** Statuses whose amounts count as charged (owed or paid). */
export const CHARGED_STATUSES = ['processing', 'INVOICED', 'paid'] as const satisfies readonly BillingRowStatus[];
/** Statuses that never count toward charged totals. */
export const NON_CHARGEABLE_STATUSES = ['waived', 'voided'] as const satisfies readonly BillingRowStatus[];
/** Still waiting for money: what a plan change voids of the base fee it replaces. */
export const UNPAID_STATUSES = statusesThatMayBecome('voided');
/** Open at the processor (not collected yet, or not yet invoiced). */
export const OPEN_STATUSES = ['processing', 'INVOICED'] as const satisfies readonly BillingRowStatus[];
/** On an invoice that saving a card should try to collect again. */
export const COLLECTABLE_STATUSES = ['INVOICED', 'failed'] as const satisfies readonly BillingRowStatus[];

/** An invoice's outcome at the processor, as its rows take it. */
export type SettlementOutcome = 'paid' | 'failed';

export const isCharged = (status: string): boolean => (CHARGED_STATUSES as readonly string[]).includes(status);
export const isNonChargeable = (status: string): boolean =>
  (NON_CHARGEABLE_STATUSES as readonly string[]).includes(status);
export const isUnpaid = (status: string): boolean => (UNPAID_STATUSES as readonly string[]).includes(status);
export const isOpen = (status: string): boolean => (OPEN_STATUSES as readonly string[]).includes(status);

/**
 * Statuses as SQL literals (`'processing', 'INVOICED', 'paid'`) for raw SQL sums: the statement
 * reads as before, constants written into it rather than bound, never a value from a request.
 */
export const sqlStatuses = (...statuses: readonly BillingRowStatus[]): SQL =>
  sql.raw(statuses.map((status) => `'${status}'`).join(', '));
