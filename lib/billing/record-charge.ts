import { asc, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { billingRows, creditLedger } from '../db/schema/billing';
import { organizations } from '../db/schema/organizations';
import type { AfterCommit } from '../db/transaction';
import * as businessMetrics from '../observability/metrics';
import { enforcedPlanOfOrganization } from '../organizations/active-plan';
import { adjustCredits } from './adjust-credits';
import { BILLING_ROW_STATUS } from './billing-row-lifecycle';
import { invoiceCharge } from './invoice-charge';
import { planIncludes } from './plan-features';
import { whenPaymentsConfigured } from './processor';
import { settleRows } from './settle-invoice';

type BillingRow = typeof billingRows.$inferSelect;

export interface ChargeLine {
  caseId: string | null;
  skuKey: string;
  description: string;
  quantity: number;
  unitAmountCents: number;
  periodStart?: Date;
  periodEnd?: Date;
}

/**
 * Records a charge (one or more lines invoiced together) under `chargeKey`, idempotently: a
 * repeat with the same key finds the rows already there and charges nothing. Credits pay first
 * (the balance row is locked, so concurrent charges never take it below zero); what remains is
 * invoiced at the processor after commit. Returns the rows and whether this call created them.
 *
 * The organization row (the credit balance) is locked before the rows are inserted, and FOR NO
 * KEY UPDATE: inserting a billing row takes a key-share lock on the organization (foreign-key
 * check), and two charges that each held it and then asked for FOR UPDATE deadlocked; FOR UPDATE
 * taken first would in turn block the foreign-key checks of a concurrent settlement that this
 * charge waits for (same charge key). NO KEY UPDATE conflicts with neither, and still serializes
 * the charges of one organization.
 */
export async function recordCharge(
  tx: Tx,
  afterCommit: AfterCommit,
  input: {
    organizationId: string;
    chargeKey: string;
    lines: ChargeLine[];
    createdById: string | null;
    /**
     * Whether the plan the charge is for includes the `credits` feature; by default, whether the
     * plan enforced now does. Without it only the organization's own money held as credit is drawn.
     */
    creditsFeature?: boolean;
  },
): Promise<{ rows: BillingRow[]; created: boolean }> {
  const [locked] = await tx
    .select({ balance: organizations.creditBalanceCents, percentage: organizations.creditDeductPercentage })
    .from(organizations)
    .where(eq(organizations.id, input.organizationId))
    .for('no key update');
  const account = locked && {
    ...locked,
    drawable: await drawableCredits(tx, input.organizationId, locked.balance, input.creditsFeature),
  };
  const inserted = await tx
    .insert(billingRows)
    .values(
      input.lines.map((line, index) => ({
        organizationId: input.organizationId,
        caseId: line.caseId,
        skuKey: line.skuKey,
        description: line.description,
        quantity: line.quantity,
        unitAmountCents: line.unitAmountCents,
        amountCents: line.quantity * line.unitAmountCents,
        status: BILLING_ROW_STATUS.processing,
        idempotencyKey: `${input.chargeKey}:${index}`,
        chargeKey: input.chargeKey,
        periodStart: line.periodStart ?? null,
        periodEnd: line.periodEnd ?? null,
        createdById: input.createdById,
      })),
    )
    .onConflictDoNothing()
    .returning();
  if (inserted.length === 0) {
    const existing = await tx
      .select()
      .from(billingRows)
      .where(eq(billingRows.chargeKey, input.chargeKey))
      .orderBy(asc(billingRows.idempotencyKey));
    return { rows: existing, created: false };
  }

  const total = inserted.reduce((sum, row) => sum + row.amountCents, 0);
  const drawn = account ? await drawCredits(tx, input.organizationId, Math.max(total, 0), inserted[0]!.id, account) : 0;
  const rows = spreadCredits(inserted, drawn);
  // Counted once committed (a rolled-back charge never is); a net credit (a downgrade) charges nothing.
  afterCommit(async () =>
    businessMetrics.chargeCreated({ amountCents: Math.max(total, 0), creditsAppliedCents: drawn }),
  );
  const applied = rows.filter((row) => row.creditsAppliedCents > 0);
  if (applied.length > 0) {
    // One statement whatever the number of lines.
    await tx
      .update(billingRows)
      .set({
        creditsAppliedCents: sql`case ${sql.join(
          applied.map((row) => sql`when ${billingRows.id} = ${row.id} then ${row.creditsAppliedCents}::int`),
          sql` `,
        )} end`,
      })
      .where(
        inArray(
          billingRows.id,
          applied.map((row) => row.id),
        ),
      );
  }
  if (total <= drawn) {
    // Credits (or a net credit) cover everything: settled now, no invoice.
    await settleRows(
      tx,
      rows.map((r) => r.id),
      BILLING_ROW_STATUS.paid,
    );
    return { rows: rows.map((r) => ({ ...r, status: BILLING_ROW_STATUS.paid })), created: true };
  }
  afterCommit(() => whenPaymentsConfigured(() => invoiceCharge(input.chargeKey)));
  return { rows, created: true };
}

/** Ledger kinds of credit that is the organization's own money: a paid fee's unused part, a voided invoice's payment, a purchase. */
const OWED_CREDIT_KINDS = ['proration', 'refund', 'purchase'] as const;

/**
 * What of the balance a charge may draw. On a plan with the `credits` feature, all of it. On a
 * plan without, only the organization's own money held as credit (OWED_CREDIT_KINDS) not yet
 * drawn: granted credits wait, kept, for a plan with the feature (docs/decisions.md, issue 30).
 * Draws are counted against owed money first, the reading most favourable to the organization.
 * The caller holds the organization row's lock, so the ledger does not move meanwhile.
 */
async function drawableCredits(
  tx: Tx,
  organizationId: string,
  balance: number,
  creditsFeature: boolean | undefined,
): Promise<number> {
  if (balance <= 0) return balance;
  const withCredits = creditsFeature ?? planIncludes(await enforcedPlanOfOrganization(tx, organizationId), 'credits');
  if (withCredits) return balance;
  const [ledger] = await tx
    .select({
      owed: sql<number>`coalesce(sum(${creditLedger.amountCents}) filter (where ${inArray(creditLedger.kind, [...OWED_CREDIT_KINDS])} and ${creditLedger.amountCents} > 0), 0)::bigint`.mapWith(
        Number,
      ),
      drawn:
        sql<number>`coalesce(-sum(${creditLedger.amountCents}) filter (where ${creditLedger.kind} = 'charge'), 0)::bigint`.mapWith(
          Number,
        ),
    })
    .from(creditLedger)
    .where(eq(creditLedger.organizationId, organizationId));
  return Math.min(balance, Math.max(0, (ledger?.owed ?? 0) - (ledger?.drawn ?? 0)));
}

/**
 * Puts credits drawn for a charge on its positive lines in order, each at most its own amount, so
 * no line is paid beyond its amount and every invoiced line (amount minus credits) stays >= 0.
 * The positive lines add up to at least the charge's total, so everything drawn finds a line.
 */
function spreadCredits(rows: BillingRow[], drawn: number): BillingRow[] {
  let left = drawn;
  return rows.map((row) => {
    const share = Math.min(left, Math.max(row.amountCents, 0));
    left -= share;
    return { ...row, creditsAppliedCents: share };
  });
}

/**
 * Takes up to the organization's deduct share of `amountCents` from its credits, at most what the
 * plan lets it draw (`drawable`, drawableCredits); returns what was taken. `organization` is the
 * balance and percentage read under the caller's row lock.
 */
async function drawCredits(
  tx: Tx,
  organizationId: string,
  amountCents: number,
  billingRowId: string,
  organization: { balance: number; drawable: number; percentage: number },
): Promise<number> {
  if (amountCents <= 0) return 0;
  if (organization.drawable <= 0) return 0;
  const drawn = Math.min(organization.drawable, Math.floor((amountCents * organization.percentage) / 100));
  if (drawn <= 0) return 0;
  await adjustCredits(tx, organizationId, -drawn, 'charge', 'Paid from credits', billingRowId, organization.balance);
  return drawn;
}
