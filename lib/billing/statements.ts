import { and, desc, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { StatementQuery } from '../../schemas/billing/billing';
import { db } from '../db/client';
import { auditEvents } from '../db/schema/audit';
import { billingRows } from '../db/schema/billing';
import { cases } from '../db/schema/cases';
import { proStatusOf } from './case-pro';
import { BILLING_ROW_STATUS, CHARGED_STATUSES, NON_CHARGEABLE_STATUSES, sqlStatuses } from './billing-row-lifecycle';
import type { OrganizationContext } from '../organizations/context';
import type { CaseContext } from '../cases/context';

type BillingRow = typeof billingRows.$inferSelect;

/** A billing row as clients see it; plan-included rows are informational. */
export function toBillingRowEntity(row: BillingRow) {
  return {
    id: row.id,
    date: row.createdAt.toISOString(),
    skuKey: row.skuKey,
    description: row.description,
    quantity: row.quantity,
    unitAmountCents: row.unitAmountCents,
    amountCents: row.amountCents,
    status: row.status,
    informational: row.informational,
    creditsAppliedCents: row.creditsAppliedCents,
    caseId: row.caseId,
    chargeScope: row.caseId ? ('case' as const) : ('platform' as const),
    ...(row.invoiceId ? { invoiceId: row.invoiceId } : {}),
    processorInvoiceId: row.invoiceId,
    hostedInvoiceUrl: row.hostedInvoiceUrl,
  };
}

/**
 * Totals by kind, in SQL over every matching row (never only a page): charged (owed or paid, not
 * informational), informational (list value of plan-included rows), non-chargeable (waived,
 * voided), failed and refunded.
 */
export const totalsColumns = {
  chargedCents:
    sql<number>`coalesce(sum(${billingRows.amountCents}) filter (where ${billingRows.status} in (${sqlStatuses(...CHARGED_STATUSES)}) and not ${billingRows.informational}), 0)::bigint`.mapWith(
      Number,
    ),
  informationalCents:
    sql<number>`coalesce(sum(${billingRows.amountCents}) filter (where ${billingRows.informational}), 0)::bigint`.mapWith(
      Number,
    ),
  nonChargeableCents:
    sql<number>`coalesce(sum(${billingRows.amountCents}) filter (where ${billingRows.status} in (${sqlStatuses(...NON_CHARGEABLE_STATUSES)})), 0)::bigint`.mapWith(
      Number,
    ),
  failedCents:
    sql<number>`coalesce(sum(${billingRows.amountCents}) filter (where ${billingRows.status} = ${sqlStatuses(BILLING_ROW_STATUS.failed)}), 0)::bigint`.mapWith(
      Number,
    ),
  refundedCents:
    sql<number>`coalesce(sum(${billingRows.amountCents}) filter (where ${billingRows.status} = ${sqlStatuses(BILLING_ROW_STATUS.refunded)}), 0)::bigint`.mapWith(
      Number,
    ),
  rowCount: sql<number>`count(*)::int`,
};

/** The audit actions that change a case's Pro, as the statement names them. */
const PRO_CHANGE_OF_ACTION = new Map<string, 'upgrade_requested' | 'ended' | 'restored'>([
  ['case.pro_upgrade.requested', 'upgrade_requested'],
  ['case.pro.ended', 'ended'],
  ['case.pro.restored', 'restored'],
]);
const PRO_CHANGES_SHOWN = 20;

/** GET /cases/{caseId}/billing/statement: the case's rows newest first, totals over all rows. */
export async function getCaseStatement(
  ctx: { organization: OrganizationContext; caseContext: CaseContext },
  query: z.output<typeof StatementQuery>,
) {
  const organizationId = ctx.organization.id;
  const target = ctx.caseContext.case;
  const limit = query.limit ?? 50;
  const skip = query.skip ?? 0;
  const where = and(eq(billingRows.organizationId, organizationId), eq(billingRows.caseId, target.id));
  const [rows, [totals], proChanges] = await Promise.all([
    db()
      .select()
      .from(billingRows)
      .where(where)
      .orderBy(desc(billingRows.createdAt), desc(billingRows.idempotencyKey))
      .limit(limit)
      .offset(skip),
    db().select(totalsColumns).from(billingRows).where(where),
    // The case's Pro history (issue 30): upgrades, and Pro ended or restored with the plan.
    db()
      .select({ at: auditEvents.occurredAt, action: auditEvents.action, metadata: auditEvents.metadata })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.organizationId, organizationId),
          eq(auditEvents.caseId, target.id),
          inArray(auditEvents.action, [...PRO_CHANGE_OF_ACTION.keys()]),
        ),
      )
      .orderBy(desc(auditEvents.sequence))
      .limit(PRO_CHANGES_SHOWN),
  ]);
  const pro = proStatusOf(target);
  return {
    caseId: target.id,
    caseName: target.name,
    isPro: pro.isPro,
    pro: {
      source: pro.source,
      until: pro.until,
      changes: proChanges.map((event) => ({
        at: event.at.toISOString(),
        change: PRO_CHANGE_OF_ACTION.get(event.action)!,
        cause: typeof event.metadata.cause === 'string' ? event.metadata.cause : null,
        paidWith: typeof event.metadata.paidWith === 'string' ? event.metadata.paidWith : null,
      })),
    },
    rows: rows.map(toBillingRowEntity),
    total: totals!.rowCount,
    limit,
    skip,
    totalChargedCents: totals!.chargedCents,
    totalInformationalCents: totals!.informationalCents,
  };
}

/**
 * GET /billing/reconciliation: a page of the organization's rows newest first, grouped by case
 * (organization-wide charges in the group 'organization', chargeScope 'platform'); each group's
 * subtotal covers all of its rows. Four queries whatever the page size.
 */
export async function getReconciliation(
  ctx: { organization: OrganizationContext },
  query: z.output<typeof StatementQuery>,
) {
  const organizationId = ctx.organization.id;
  const limit = query.limit ?? 50;
  const skip = query.skip ?? 0;
  const where = eq(billingRows.organizationId, organizationId);
  const [rows, [totals]] = await Promise.all([
    db()
      .select({ row: billingRows, caseName: cases.name })
      .from(billingRows)
      .leftJoin(cases, eq(cases.id, billingRows.caseId))
      .where(where)
      .orderBy(desc(billingRows.createdAt), desc(billingRows.idempotencyKey))
      .limit(limit)
      .offset(skip),
    db().select(totalsColumns).from(billingRows).where(where),
  ]);
  const caseIds = [...new Set(rows.map((r) => r.row.caseId).filter((id): id is string => id !== null))];
  const groupFilters: SQL[] = [];
  if (caseIds.length > 0) groupFilters.push(inArray(billingRows.caseId, caseIds));
  if (rows.some((r) => r.row.caseId === null)) groupFilters.push(isNull(billingRows.caseId));
  const subtotals =
    groupFilters.length === 0
      ? []
      : await db()
          .select({ caseId: billingRows.caseId, ...totalsColumns })
          .from(billingRows)
          .where(and(where, sql`(${sql.join(groupFilters, sql` or `)})`))
          .groupBy(billingRows.caseId);
  const subtotalOf = new Map(subtotals.map((s) => [s.caseId ?? 'organization', s]));

  const groups = new Map<
    string,
    {
      caseId: string;
      caseName: string | null;
      chargeScope: 'case' | 'platform';
      subtotalChargedCents: number;
      subtotalInformationalCents: number;
      rows: ReturnType<typeof toBillingRowEntity>[];
    }
  >();
  for (const { row, caseName } of rows) {
    const key = row.caseId ?? 'organization';
    let group = groups.get(key);
    if (!group) {
      const subtotal = subtotalOf.get(key);
      group = {
        caseId: key,
        caseName: row.caseId ? caseName : null,
        chargeScope: row.caseId ? 'case' : 'platform',
        subtotalChargedCents: subtotal?.chargedCents ?? 0,
        subtotalInformationalCents: subtotal?.informationalCents ?? 0,
        rows: [],
      };
      groups.set(key, group);
    }
    group.rows.push(toBillingRowEntity(row));
  }
  return {
    groups: [...groups.values()],
    total: totals!.rowCount,
    limit,
    skip,
    totalChargedCents: totals!.chargedCents,
    totalInformationalCents: totals!.informationalCents,
  };
}
