import { and, asc, count, eq, gte, lte, type SQL } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { config } from '../config';
import { db } from '../db/client';
import { transaction } from '../db/transaction';
import { billingRows, cases, organizations } from '../db/schema';
import type * as z from 'zod/mini';
import type { BillingReportQueryDto } from '../../schemas/billing/billing';
import { recordAudit, recordAuditNow } from '../audit';
import type { Actor } from '../auth/actor';
import { InvalidInputError } from '../errors';
import type { OrganizationContext } from '../organizations/context';
import { idIn, newId } from '../ids';
import { objectStorage } from '../storage';
import { CHARGED_STATUSES } from './charges';
import { BillingReportsOffError, ReportTooLargeError } from './errors';
import { recordBillingHistory } from './history';

export const MAX_REPORT_ROWS = 50_000;
const DOWNLOAD_LINK_SECONDS = 15 * 60;

type BillingRow = typeof billingRows.$inferSelect;

function reportRow(row: BillingRow) {
  return {
    date: row.createdAt.toISOString(),
    skuKey: row.skuKey,
    description: row.description,
    quantity: row.quantity,
    unitAmountCents: row.unitAmountCents,
    amountCents: row.amountCents,
    status: row.status,
    ...(row.invoiceId ? { invoiceId: row.invoiceId } : {}),
  };
}

const isCharged = (row: BillingRow) =>
  (CHARGED_STATUSES as readonly string[]).includes(row.status) && !row.informational;

/**
 * POST /billing/report: the organization's billing over a window (default: the current billing
 * period up to now), optionally some cases, as JSON or as a stored PDF with a time-limited link.
 * Over 50,000 rows is refused before any row is loaded. Each report answered records its audit
 * event (the billing of the organization's cases was read); a stored PDF records it with its
 * history entry, in one transaction.
 */
export async function createBillingReport(
  ctx: { organization: Pick<OrganizationContext, 'id'>; actor: { user: Pick<Actor['user'], 'id'> } },
  query: z.output<typeof BillingReportQueryDto>,
) {
  const organizationId = ctx.organization.id;
  const actorId = ctx.actor.user.id;
  if (!config().FEATURE_BILLING_REPORTS) throw new BillingReportsOffError();
  const [organization] = await db().select().from(organizations).where(eq(organizations.id, organizationId));
  const at = now();
  const monthStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const startDate = query.startDate ? new Date(query.startDate) : (organization!.billingPeriodStart ?? monthStart);
  const endDate = query.endDate ? new Date(query.endDate) : at;
  if (startDate > endDate) {
    // Name the field the client sent: a defaulted bound is not theirs to fix.
    const field = query.startDate ? 'startDate' : 'endDate';
    const message = query.startDate
      ? `startDate is after endDate (${endDate.toISOString()})`
      : `endDate is before startDate (the start of the current billing period, ${startDate.toISOString()})`;
    throw new InvalidInputError([{ field, message }]);
  }

  const filters: SQL[] = [
    eq(billingRows.organizationId, organizationId),
    gte(billingRows.createdAt, startDate),
    lte(billingRows.createdAt, endDate),
  ];
  // Ids that are not UUIDs match nothing: a list of only those filters every row out.
  if (query.caseIds?.length) filters.push(idIn(billingRows.caseId, query.caseIds));
  const where = and(...filters);
  const [{ rows: rowCount }] = (await db().select({ rows: count() }).from(billingRows).where(where)) as [
    { rows: number },
  ];
  if (rowCount > MAX_REPORT_ROWS) throw new ReportTooLargeError(rowCount, MAX_REPORT_ROWS);

  const rows = await db()
    .select({ row: billingRows, caseName: cases.name })
    .from(billingRows)
    .leftJoin(cases, eq(cases.id, billingRows.caseId))
    .where(where)
    .orderBy(asc(billingRows.createdAt), asc(billingRows.idempotencyKey));

  const sections = new Map<
    string,
    {
      caseId: string;
      caseName: string;
      rows: ReturnType<typeof reportRow>[];
      subtotalChargedCents: number;
      subtotalInformationalCents: number;
    }
  >();
  const totals = { charged: 0, informational: 0, nonChargeable: 0, failed: 0, refunded: 0 };
  for (const { row, caseName } of rows) {
    const key = row.caseId ?? 'organization';
    let section = sections.get(key);
    if (!section) {
      section = {
        caseId: key,
        caseName: row.caseId ? (caseName ?? '') : 'Organization-wide charges',
        rows: [],
        subtotalChargedCents: 0,
        subtotalInformationalCents: 0,
      };
      sections.set(key, section);
    }
    section.rows.push(reportRow(row));
    if (isCharged(row)) {
      section.subtotalChargedCents += row.amountCents;
      totals.charged += row.amountCents;
    }
    if (row.informational) {
      section.subtotalInformationalCents += row.amountCents;
      totals.informational += row.amountCents;
    }
    if (row.status === 'waived' || row.status === 'voided') totals.nonChargeable += row.amountCents;
    if (row.status === 'failed') totals.failed += row.amountCents;
    if (row.status === 'refunded') totals.refunded += row.amountCents;
  }
  const report = {
    organizations: [
      {
        organizationId,
        organizationName: organization!.name,
        tier: organization!.billingTier ?? 'free',
        billingMode: organization!.billingMode,
        onCaseBilling: organization!.billingMode === 'pay_as_you_go',
        window: { startDate: startDate.toISOString(), endDate: endDate.toISOString() },
        cases: [...sections.values()],
        totalChargedCents: totals.charged,
        totalInformationalCents: totals.informational,
        totalNonChargeableCents: totals.nonChargeable,
        totalFailedCents: totals.failed,
        totalRefundedCents: totals.refunded,
      },
    ],
    grandTotalChargedCents: totals.charged,
  };
  const reported = {
    format: query.format,
    startDate: startDate.toISOString(),
    endDate: endDate.toISOString(),
    caseIds: query.caseIds ?? null,
    rowCount,
  };
  if (query.format === 'json') {
    await recordAuditNow({
      action: 'billing.report.created',
      organizationId,
      metadata: { ...reported, storageKey: null },
    });
    return report;
  }

  const { renderBillingReportPdf } = await import('./report-pdf');
  const bytes = await renderBillingReportPdf(report, at);
  const fileName = `billing-report-${organization!.slug}-${startDate.toISOString().slice(0, 10)}-${endDate.toISOString().slice(0, 10)}.pdf`;
  const reportId = newId();
  const key = `reports/${organizationId}/${reportId}/${fileName}`;
  await objectStorage().put(key, bytes, 'application/pdf');
  const downloadUrl = await objectStorage().downloadUrl(key, DOWNLOAD_LINK_SECONDS);
  const expiresAt = addSeconds(at, DOWNLOAD_LINK_SECONDS).toISOString();
  await transaction(async (tx) => {
    await recordBillingHistory(tx, {
      organizationId,
      category: 'invoicing',
      description: `Billing report (PDF, ${rowCount} rows) generated`,
      createdById: actorId,
    });
    recordAudit(tx, {
      action: 'billing.report.created',
      organizationId,
      target: { type: 'billing_report', id: reportId },
      metadata: { ...reported, storageKey: key, sizeBytes: bytes.byteLength, linkExpiresAt: expiresAt },
    });
  });
  return {
    fileName,
    contentType: 'application/pdf' as const,
    sizeBytes: bytes.byteLength,
    storageKey: key,
    rowCount,
    downloadUrl,
    expiresAt,
  };
}

export type BillingReport = {
  organizations: Array<{
    organizationName: string;
    tier: string;
    billingMode: string;
    window: { startDate: string; endDate: string };
    cases: Array<{
      caseId: string;
      caseName: string;
      rows: ReturnType<typeof reportRow>[];
      subtotalChargedCents: number;
      subtotalInformationalCents: number;
    }>;
    totalChargedCents: number;
    totalInformationalCents: number;
    totalNonChargeableCents: number;
    totalFailedCents: number;
    totalRefundedCents: number;
  }>;
  grandTotalChargedCents: number;
};
