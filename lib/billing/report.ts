import { and, count, eq, gte, lte, max, type SQL } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { config } from '../config';
import { db } from '../db/client';
import { transaction } from '../db/transaction';
import { billingRows } from '../db/schema/billing';
import { organizations } from '../db/schema/organizations';
import type * as z from 'zod/mini';
import type { BillingReportQueryDto } from '../../schemas/billing/billing';
import { recordAuditNow } from '../audit';
import { recordAudit } from '../audit/record';
import type { Actor } from '../auth/actor';
import { InvalidInputError } from '../errors';
import type { OrganizationContext } from '../organizations/context';
import { idIn } from '../ids';
import { objectStorage } from '../storage/configured-storage';
import { generatedDocument } from '../storage/generated-documents';
import { BILLING_ROW_STATUS, isCharged as isChargedStatus, isNonChargeable } from './billing-row-lifecycle';
import { BillingReportsOffError, ReportTooLargeError } from './errors';
import { recordBillingHistory } from './history';
import { assertFeatureInPlan } from './plan-features';
import { type ReportSourceRow, reportRows } from './report-rows';

export const MAX_REPORT_ROWS = 50_000;
const DOWNLOAD_LINK_SECONDS = 15 * 60;

/** A row as the JSON report lists it (the PDF prints the same fields). */
function reportRow(row: ReportSourceRow) {
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
export type BillingReportRow = ReturnType<typeof reportRow>;

const isCharged = (row: ReportSourceRow) => isChargedStatus(row.status) && !row.informational;

/** What a PDF is written to, section by section (BillingReportPdf). */
export interface BillingReportSink {
  section(caseId: string, caseName: string): void;
  row(row: BillingReportRow): void;
  sectionEnd(subtotals: { subtotalChargedCents: number; subtotalInformationalCents: number }): void;
}

type Section = BillingReport['organizations'][number]['cases'][number];
type Totals = { charged: number; informational: number; nonChargeable: number; failed: number; refunded: number };

const sectionOf = (row: ReportSourceRow): Section => ({
  caseId: row.caseId ?? 'organization',
  caseName: row.caseId ? (row.caseName ?? '') : 'Organization-wide charges',
  rows: [],
  subtotalChargedCents: 0,
  subtotalInformationalCents: 0,
});

/** Adds a row's amount to its section's subtotals and to the totals: integer cents, so exact. */
function sum(row: ReportSourceRow, section: Section, totals: Totals): void {
  if (isCharged(row)) {
    section.subtotalChargedCents += row.amountCents;
    totals.charged += row.amountCents;
  }
  if (row.informational) {
    section.subtotalInformationalCents += row.amountCents;
    totals.informational += row.amountCents;
  }
  if (isNonChargeable(row.status)) totals.nonChargeable += row.amountCents;
  if (row.status === BILLING_ROW_STATUS.failed) totals.failed += row.amountCents;
  if (row.status === BILLING_ROW_STATUS.refunded) totals.refunded += row.amountCents;
}

const reportTotals = (totals: Totals) => ({
  totalChargedCents: totals.charged,
  totalInformationalCents: totals.informational,
  totalNonChargeableCents: totals.nonChargeable,
  totalFailedCents: totals.failed,
  totalRefundedCents: totals.refunded,
});
const noTotals = (): Totals => ({ charged: 0, informational: 0, nonChargeable: 0, failed: 0, refunded: 0 });

/**
 * The JSON report's sections, each in order of its first row, with their rows (read in time
 * order through reportRows) and subtotals, and the totals.
 */
async function collectSections(where: SQL | undefined) {
  const sections = new Map<string, Section>();
  const totals = noTotals();
  for await (const batch of reportRows(where, 'time')) {
    for (const row of batch) {
      const key = row.caseId ?? 'organization';
      let section = sections.get(key);
      if (!section) {
        section = sectionOf(row);
        sections.set(key, section);
      }
      section.rows.push(reportRow(row));
      sum(row, section, totals);
    }
  }
  return { sections: [...sections.values()], totals: reportTotals(totals) };
}

/**
 * Streams the report's rows into `sink` a section at a time (read in section order through
 * reportRows), each section's subtotal at its end, holding no row once written.
 */
async function writeSections(where: SQL | undefined, sink: BillingReportSink) {
  const totals = noTotals();
  let open: Section | undefined;
  const close = () => {
    if (open) sink.sectionEnd(open);
  };
  for await (const batch of reportRows(where, 'section')) {
    for (const row of batch) {
      if (open?.caseId !== (row.caseId ?? 'organization')) {
        close();
        open = sectionOf(row);
        sink.section(open.caseId, open.caseName);
      }
      sink.row(reportRow(row));
      sum(row, open, totals);
    }
  }
  close();
  return reportTotals(totals);
}

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
  await assertFeatureInPlan(db(), organizationId, 'billing_reports');
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
  // The newest row covered (created or changed) is part of what a stored PDF covers.
  const [{ rows: rowCount, newestCreated, newestUpdated }] = (await db()
    .select({
      rows: count(),
      newestCreated: max(billingRows.createdAt),
      newestUpdated: max(billingRows.updatedAt),
    })
    .from(billingRows)
    .where(where)) as [{ rows: number; newestCreated: Date | null; newestUpdated: Date | null }];
  if (rowCount > MAX_REPORT_ROWS) throw new ReportTooLargeError(rowCount, MAX_REPORT_ROWS);

  const reported = {
    format: query.format,
    startDate: startDate.toISOString(),
    endDate: endDate.toISOString(),
    caseIds: query.caseIds ?? null,
    rowCount,
  };
  const heading = {
    organizationId,
    organizationName: organization!.name,
    tier: organization!.billingTier ?? 'free',
    billingMode: organization!.billingMode,
    onCaseBilling: organization!.billingMode === 'pay_as_you_go',
    window: { startDate: startDate.toISOString(), endDate: endDate.toISOString() },
  };
  if (query.format === 'json') {
    const { sections, totals } = await collectSections(where);
    await recordAuditNow({
      action: 'billing.report.created',
      organizationId,
      metadata: { ...reported, storageKey: null },
    });
    return {
      organizations: [{ ...heading, cases: sections, ...totals }],
      grandTotalChargedCents: totals.totalChargedCents,
    } satisfies BillingReport;
  }

  // A generated document (lib/storage/generated-documents.ts), kept a week under
  // generated/organizations/<orgId>/reports/ and counted in storage: the same parameters over the
  // same rows (none added or changed since) hand out the same PDF. An end left to default ("now")
  // covers the same rows until a newer one comes.
  const covers = JSON.stringify({
    heading: { ...heading, window: { startDate: heading.window.startDate, endDate: query.endDate ? endDate : 'now' } },
    caseIds: query.caseIds ? [...query.caseIds].sort() : null,
    rowCount,
    newestCreated,
    newestUpdated,
  });
  const fileName = `billing-report-${organization!.slug}-${startDate.toISOString().slice(0, 10)}-${endDate.toISOString().slice(0, 10)}.pdf`;
  const document = await generatedDocument({
    organizationId,
    caseId: null,
    kind: 'billing-report',
    covers,
    fileName,
    contentType: 'application/pdf',
    linkSeconds: DOWNLOAD_LINK_SECONDS,
    render: async () => {
      // The PDF is written page by page as the rows stream in: neither the rows nor the page
      // operators are held, only each finished page's compressed content.
      const { BillingReportPdf } = await import('./report-pdf');
      const pdf = await BillingReportPdf.start(heading, at);
      const totals = await writeSections(where, pdf);
      return { bytes: await pdf.finish(totals, totals.totalChargedCents), details: {} };
    },
  });
  const key = document.objectKey;
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
      target: { type: 'billing_report', id: document.id },
      metadata: { ...reported, storageKey: key, sizeBytes: document.bytes, linkExpiresAt: expiresAt },
    });
  });
  return {
    fileName: document.fileName,
    contentType: 'application/pdf' as const,
    sizeBytes: document.bytes,
    storageKey: key,
    rowCount,
    downloadUrl,
    expiresAt,
  };
}

export type BillingReport = {
  organizations: Array<{
    organizationId: string;
    organizationName: string;
    tier: string;
    billingMode: string;
    onCaseBilling: boolean;
    window: { startDate: string; endDate: string };
    cases: Array<{
      caseId: string;
      caseName: string;
      rows: BillingReportRow[];
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
