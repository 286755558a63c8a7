import { and, asc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { recordAudit, SYSTEM_ACTOR, SYSTEM_SCOPE, withAuditScope } from '../audit';
import { addSeconds, now } from '../clock';
import { db, type Executor, type Tx } from '../db/client';
import { billingHistory, billingRows, cases, creditLedger, organizations } from '../db/schema';
import { type AfterCommit, transaction } from '../db/transaction';
import { logger } from '../log';
import * as businessMetrics from '../observability/metrics';
import { alignPlanPro } from './case-pro';
import { ensureProcessorCustomer } from './customers';
import { paymentProcessor, paymentsConfigured, whenPaymentsConfigured } from './processor';
import { enforcedPlanOfOrganization } from '../organizations/active-plan';
import { planIncludes } from './plan-features';
import { PRO_UPGRADE_SKU } from './tiers';

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

/** Statuses whose amounts count as charged (owed or paid). */
export const CHARGED_STATUSES = ['processing', 'INVOICED', 'paid'] as const;
/** Statuses that never count toward charged totals. */
export const NON_CHARGEABLE_STATUSES = ['waived', 'voided'] as const;

/**
 * What the payment processor told us: a webhook event (its type and id), or its answer to one of
 * our calls (typed like the event it stands for, with no event id).
 */
export interface ProcessorReport {
  type: string;
  processorEventId: string | null;
}

const invoiceOutcomeReport = (outcome: 'paid' | 'failed'): ProcessorReport => ({
  type: outcome === 'paid' ? 'invoice.paid' : 'invoice.payment_failed',
  processorEventId: null,
});

/**
 * The audit event of a change the processor reported, made by the system. A webhook event carries
 * the request that delivered it; the processor's answer to a call made after a commit is not part
 * of the request that happened to make it (that request records its own event), so it carries none.
 */
export function recordProcessorEvent(
  tx: Tx,
  organizationId: string,
  report: ProcessorReport,
  target: { type: string; id: string } | null,
  metadata: Record<string, unknown> = {},
): void {
  const record = () =>
    recordAudit(tx, {
      action: 'billing.processor_event.received',
      organizationId,
      target,
      metadata: { type: report.type, processorEventId: report.processorEventId, ...metadata },
      actor: SYSTEM_ACTOR,
    });
  if (report.processorEventId) record();
  else withAuditScope(SYSTEM_SCOPE, record);
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
        status: 'processing' as const,
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
      'paid',
    );
    return { rows: rows.map((r) => ({ ...r, status: 'paid' as const })), created: true };
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

/**
 * Changes the credit balance and writes the ledger entry in the same transaction. The caller
 * holds the row lock (or passes the balance it read under it); the database refuses a negative balance.
 */
export async function adjustCredits(
  tx: Executor,
  organizationId: string,
  amountCents: number,
  kind: (typeof creditLedger.$inferInsert)['kind'],
  description: string,
  billingRowId: string | null,
  lockedBalance?: number,
  idempotencyKey?: string,
): Promise<number> {
  let balance = lockedBalance;
  if (balance === undefined) {
    const [row] = await tx
      .select({ balance: organizations.creditBalanceCents })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('no key update');
    balance = row!.balance;
  }
  const after = balance + amountCents;
  await tx.update(organizations).set({ creditBalanceCents: after }).where(eq(organizations.id, organizationId));
  await tx.insert(creditLedger).values({
    organizationId,
    amountCents,
    balanceAfterCents: after,
    kind,
    description,
    billingRowId,
    idempotencyKey: idempotencyKey ?? null,
  });
  return after;
}

/**
 * Invoices the unpaid part of a charge at the processor (after commit). Safe to repeat: the
 * processor call carries the charge's idempotency key, so a retry after a lost answer finds the
 * same invoice instead of charging twice. On failure the rows stay `processing` and the
 * maintenance job retries.
 */
export async function invoiceCharge(chargeKey: string): Promise<void> {
  const rows = await db()
    .select()
    .from(billingRows)
    .where(eq(billingRows.chargeKey, chargeKey))
    .orderBy(asc(billingRows.idempotencyKey));
  const open = rows.filter((row) => row.status === 'processing' && row.invoiceId === null);
  if (open.length === 0) return;
  const organizationId = open[0]!.organizationId;
  const customerId = await ensureProcessorCustomer(organizationId);
  if (!customerId) throw new Error(`Organization ${organizationId} has no processor customer`);
  const lines = open.map((row) => ({
    description: row.description,
    amountCents: row.amountCents - row.creditsAppliedCents,
  }));
  const processor = await paymentProcessor();
  const result = await processor.chargeInvoice({
    customerId,
    lines,
    idempotencyKey: `charge:${chargeKey}`,
    metadata: { chargeKey, organizationId },
  });
  const voidedMeanwhile = await transaction(async (tx) => {
    const invoiced = await tx
      .update(billingRows)
      .set({ invoiceId: result.invoiceId, hostedInvoiceUrl: result.hostedInvoiceUrl, status: 'INVOICED' })
      .where(
        and(
          inArray(
            billingRows.id,
            open.map((r) => r.id),
          ),
          eq(billingRows.status, 'processing'),
        ),
      )
      .returning({ id: billingRows.id });
    if (invoiced.length > 0) {
      if (result.status !== 'open') await settleInvoice(tx, result.invoiceId, result.status);
      return false;
    }
    // A plan change voided the charge while its invoice was being made: the rows keep the invoice
    // id, so it is voided at the processor like any other (money it took is kept as credit).
    const voided = await tx
      .update(billingRows)
      .set({ invoiceId: result.invoiceId, hostedInvoiceUrl: result.hostedInvoiceUrl })
      .where(
        and(
          inArray(
            billingRows.id,
            open.map((r) => r.id),
          ),
          eq(billingRows.status, 'voided'),
          isNull(billingRows.invoiceId),
        ),
      )
      .returning({ id: billingRows.id });
    return voided.length > 0;
  });
  if (voidedMeanwhile) await closeVoidedInvoice(result.invoiceId);
}

/**
 * The rows of `invoiceId` were voided (a plan change replaced an unpaid base fee): void the
 * invoice at the processor so it can never be collected. If it was paid first, the payment is
 * kept as credit. Either way the rows are marked closed; until then maintenance retries.
 */
export async function closeVoidedInvoice(invoiceId: string): Promise<void> {
  const rows = await db()
    .select()
    .from(billingRows)
    .where(
      and(eq(billingRows.invoiceId, invoiceId), eq(billingRows.status, 'voided'), isNull(billingRows.invoiceClosedAt)),
    );
  if (rows.length === 0) return;
  const processor = await paymentProcessor();
  const outcome = await processor.voidInvoice(invoiceId, `void:${invoiceId}`);
  await transaction(async (tx, afterCommit) => {
    if (outcome === 'paid') {
      const organizationId = rows[0]!.organizationId;
      const paidCents = rows.reduce((sum, row) => sum + row.amountCents - row.creditsAppliedCents, 0);
      const creditedCents = await keepPaymentAsCredit(tx, organizationId, invoiceId, paidCents);
      afterCommit(async () => businessMetrics.creditsAdded(creditedCents));
      // The processor answered that the invoice was paid before it could be voided: money in.
      if (creditedCents > 0)
        recordProcessorEvent(
          tx,
          organizationId,
          invoiceOutcomeReport('paid'),
          { type: 'invoice', id: invoiceId },
          { invoiceId, keptAsCreditCents: creditedCents },
        );
    }
    await tx
      .update(billingRows)
      .set({ invoiceClosedAt: now() })
      .where(and(eq(billingRows.invoiceId, invoiceId), eq(billingRows.status, 'voided')));
  });
}

/** Maintenance: invoices of voided rows that the processor has not confirmed void yet. */
export async function retryVoidedInvoices(olderThanSeconds = 60, limit = 50): Promise<number> {
  if (!(await paymentsConfigured())) return 0;
  const pending = await db()
    .selectDistinct({ invoiceId: billingRows.invoiceId })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.status, 'voided'),
        isNotNull(billingRows.invoiceId),
        isNull(billingRows.invoiceClosedAt),
        lt(billingRows.updatedAt, addSeconds(now(), -olderThanSeconds)),
      ),
    )
    .limit(limit);
  let closed = 0;
  for (const { invoiceId } of pending) {
    try {
      await closeVoidedInvoice(invoiceId!);
      closed += 1;
    } catch (error) {
      logger.warn('voiding an invoice failed', { invoiceId, error });
    }
  }
  return closed;
}

/**
 * Money received on an invoice whose charge was voided is credited to the organization, once per
 * invoice (the ledger entry's idempotency key), so it is never lost nor credited twice. Returns
 * what this call credited (0 when it was already).
 */
export async function keepPaymentAsCredit(
  tx: Tx,
  organizationId: string,
  invoiceId: string,
  amountCents: number,
): Promise<number> {
  if (amountCents <= 0) return 0;
  const idempotencyKey = `voided-charge-payment:${invoiceId}`;
  const [account] = await tx
    .select({ balance: organizations.creditBalanceCents })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('no key update');
  const [already] = await tx
    .select({ id: creditLedger.id })
    .from(creditLedger)
    .where(eq(creditLedger.idempotencyKey, idempotencyKey));
  if (!account || already) return 0;
  await adjustCredits(
    tx,
    organizationId,
    amountCents,
    'refund',
    `Payment of voided invoice ${invoiceId} kept as credit`,
    null,
    account.balance,
    idempotencyKey,
  );
  return amountCents;
}

/**
 * Marks every row of an invoice paid or failed (webhook or sandbox settlement); a repeat changes
 * nothing. A settlement records the processor's report (by default its answer to our call) as
 * the audit event of the change. Returns the number of rows settled.
 */
export async function settleInvoice(
  tx: Tx,
  invoiceId: string,
  outcome: 'paid' | 'failed',
  report: ProcessorReport = invoiceOutcomeReport(outcome),
): Promise<number> {
  const rows = await tx
    .select({ id: billingRows.id, organizationId: billingRows.organizationId })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.invoiceId, invoiceId),
        inArray(
          billingRows.status,
          outcome === 'paid' ? ['processing', 'INVOICED', 'failed'] : ['processing', 'INVOICED'],
        ),
      ),
    );
  if (rows.length === 0) return 0;
  await settleRows(
    tx,
    rows.map((r) => r.id),
    outcome,
  );
  // An invoice belongs to one organization.
  recordProcessorEvent(
    tx,
    rows[0]!.organizationId,
    report,
    { type: 'invoice', id: invoiceId },
    { invoiceId, outcome, rowsSettled: rows.length },
  );
  return rows.length;
}

/** Sets the outcome on rows and applies what it means: Pro cases, delinquency of a failed base fee. */
async function settleRows(tx: Tx, rowIds: string[], outcome: 'paid' | 'failed'): Promise<void> {
  const rows = await tx.update(billingRows).set({ status: outcome }).where(inArray(billingRows.id, rowIds)).returning();
  const proCases = rows.filter((r) => r.skuKey === PRO_UPGRADE_SKU.key && r.caseId).map((r) => r.caseId!);
  const baseFees = rows.filter((r) => r.skuKey.startsWith('platform_base_fee') && r.amountCents > 0);
  if (outcome === 'paid' && proCases.length > 0)
    await tx.update(cases).set({ isPro: true, proSource: 'paid', proUntil: null }).where(inArray(cases.id, proCases));
  for (const row of baseFees) {
    await tx
      .update(organizations)
      .set({
        baseFeeFailedAt:
          outcome === 'failed'
            ? sql`coalesce(${organizations.baseFeeFailedAt}, ${sql.param(now(), organizations.baseFeeFailedAt)})`
            : null,
      })
      .where(eq(organizations.id, row.organizationId));
  }
  // Pro through a Pro-including plan follows its fee: lasting once paid, ending with its days to pay once failed.
  for (const organizationId of new Set(baseFees.map((row) => row.organizationId)))
    await alignPlanPro(tx, organizationId, outcome === 'paid' ? 'base_fee_paid' : 'base_fee_failed');
  const organizationIds = [...new Set(rows.map((r) => r.organizationId))];
  for (const organizationId of organizationIds) {
    const own = rows.filter((r) => r.organizationId === organizationId);
    await tx.insert(billingHistory).values({
      organizationId,
      category: 'invoicing',
      caseId: own.find((r) => r.caseId)?.caseId ?? null,
      description: `${own.length} billing row(s) ${outcome === 'paid' ? 'paid' : 'failed to collect'}${own[0]?.invoiceId ? ` (invoice ${own[0].invoiceId})` : ''}`,
    });
  }
}

/** Maintenance: charges whose invoicing failed or never ran are invoiced again (same idempotency key). */
export async function retryStuckCharges(olderThanSeconds = 60, limit = 50): Promise<number> {
  if (!(await paymentsConfigured())) return 0;
  const stuck = await db()
    .selectDistinct({ chargeKey: billingRows.chargeKey })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.status, 'processing'),
        isNull(billingRows.invoiceId),
        lt(billingRows.createdAt, addSeconds(now(), -olderThanSeconds)),
      ),
    )
    .limit(limit);
  let retried = 0;
  for (const { chargeKey } of stuck) {
    try {
      await invoiceCharge(chargeKey);
      retried += 1;
    } catch (error) {
      logger.warn('charge retry failed', { chargeKey, error });
    }
  }
  return retried;
}

/** After a card is attached: try again to collect the organization's open invoices. */
export async function collectOpenInvoices(organizationId: string): Promise<void> {
  const open = await db()
    .selectDistinct({ invoiceId: billingRows.invoiceId })
    .from(billingRows)
    .where(and(eq(billingRows.organizationId, organizationId), inArray(billingRows.status, ['INVOICED', 'failed'])));
  const processor = await paymentProcessor();
  for (const { invoiceId } of open) {
    if (!invoiceId) continue;
    const result = await processor.payInvoice(invoiceId, `pay:${invoiceId}:${now().getTime()}`);
    if (result.status !== 'open')
      await transaction((tx) => settleInvoice(tx, invoiceId, result.status as 'paid' | 'failed'));
  }
}
