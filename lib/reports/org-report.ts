import { and, count, countDistinct, ilike, inArray, isNull, or, sql } from 'drizzle-orm';
import { billingSummary } from '../billing/summary';
import { addDays, now } from '../clock';
import { db } from '../db/client';
import { containsPattern } from '../db/like';
import { cases, devices } from '../db/schema/cases';
import { extractionAttempts } from '../db/schema/material';
import { organizations } from '../db/schema/organizations';
import { extractionCodes } from '../db/schema/platform';
import { planUsageByOrganization, toActivePlanEntity } from '../organizations/active-plan';
import { toOrganizationEntity } from '../organizations/entity';
import type * as z from 'zod/mini';
import type { OrgReportQuery } from '../../schemas/material/material';
import { pageWindow, sortDirection, toPage } from '../paging';

/** Cases created within this many days count as recent for the unused-codes figure. */
export const RECENT_CASE_DAYS = 30;

/**
 * GET /admin/report/org-report: one page of organizations with their activity figures, newest
 * first (the contract states no order; sortOrder asc for oldest first). Every figure comes from
 * one aggregate query over the page's organizations (GROUP BY organization): eight queries per
 * page whatever the organizations hold.
 */
export async function getOrganizationReport(query: z.output<typeof OrgReportQuery>) {
  const window = pageWindow(query);
  const pattern = query.searchText ? containsPattern(query.searchText) : undefined;
  const where = pattern ? or(ilike(organizations.name, pattern), ilike(organizations.email, pattern)) : undefined;
  const direction = sortDirection(query.sortOrder, 'desc');
  const [page, [totals]] = await Promise.all([
    db()
      .select()
      .from(organizations)
      .where(where)
      .orderBy(direction(organizations.createdAt), direction(organizations.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(organizations).where(where),
  ]);
  const ids = page.map((o) => o.id);
  if (ids.length === 0) return toPage(window, totals!.total, []);
  const recent = addDays(now(), -RECENT_CASE_DAYS);

  const [usage, caseCounts, codeCounts, deviceCounts, attemptCounts] = await Promise.all([
    planUsageByOrganization(db(), ids),
    db()
      .select({ organizationId: cases.organizationId, total: count() })
      .from(cases)
      .where(and(inArray(cases.organizationId, ids), isNull(cases.deletedAt)))
      .groupBy(cases.organizationId),
    db()
      .select({
        organizationId: extractionCodes.organizationId,
        total: count(),
        unused: sql<number>`count(*) filter (where ${extractionCodes.usedAt} is null)::int`,
        unusedOnRecentCases: sql<number>`count(*) filter (where ${extractionCodes.usedAt} is null and ${extractionCodes.caseId} in (select ${cases.id} from ${cases} where ${cases.createdAt} >= ${sql.param(recent, cases.createdAt)}))::int`,
      })
      .from(extractionCodes)
      .where(inArray(extractionCodes.organizationId, ids))
      .groupBy(extractionCodes.organizationId),
    db()
      .select({ organizationId: devices.organizationId, total: countDistinct(devices.deviceId) })
      .from(devices)
      .where(inArray(devices.organizationId, ids))
      .groupBy(devices.organizationId),
    db()
      .select({
        organizationId: extractionAttempts.organizationId,
        total: count(),
        success: sql<number>`count(*) filter (where ${extractionAttempts.outcome} = 'success')::int`,
        failed: sql<number>`count(*) filter (where ${extractionAttempts.outcome} = 'failed')::int`,
        cancelled: sql<number>`count(*) filter (where ${extractionAttempts.outcome} = 'cancelled')::int`,
        devices: countDistinct(extractionAttempts.deviceId),
        maxPerDevice: sql<number>`coalesce((select max(n) from (select count(*)::int as n from ${extractionAttempts} a where a.organization_id = ${extractionAttempts.organizationId} and a.device_id is not null group by a.device_id) per_device), 0)`,
      })
      .from(extractionAttempts)
      .where(inArray(extractionAttempts.organizationId, ids))
      .groupBy(extractionAttempts.organizationId),
  ]);
  const byOrg = <T extends { organizationId: string }>(rows: T[]) => new Map(rows.map((r) => [r.organizationId, r]));
  const casesOf = byOrg(caseCounts);
  const codesOf = byOrg(codeCounts);
  const devicesOf = byOrg(deviceCounts);
  const attemptsOf = byOrg(attemptCounts);

  const records = page.map((organization) => {
    const plan = usage.get(organization.id);
    const codes = codesOf.get(organization.id);
    const attempts = attemptsOf.get(organization.id);
    const subscription = billingSummary(organization) ?? { billingMode: 'legacy' as const };
    return {
      organization: toOrganizationEntity(organization, plan ? toActivePlanEntity(plan, subscription) : null),
      otherData: {
        accountAgeInDays: Math.floor((now().getTime() - organization.createdAt.getTime()) / 86_400_000),
        totalCases: casesOf.get(organization.id)?.total ?? 0,
        totalExtractionCodes: codes?.total ?? 0,
        unusedExtractionCodes: codes?.unused ?? 0,
        totalUniqueDevices: devicesOf.get(organization.id)?.total ?? 0,
        unusedExtractionCodesOnRecentCases: codes?.unusedOnRecentCases ?? 0,
        extractionAttemptsByOutcome: {
          success: attempts?.success ?? 0,
          failed: attempts?.failed ?? 0,
          cancelled: attempts?.cancelled ?? 0,
        },
        extractionAttemptsPerDevice: {
          average: attempts && attempts.devices > 0 ? Math.round((attempts.total / attempts.devices) * 100) / 100 : 0,
          max: attempts?.maxPerDevice ?? 0,
        },
      },
    };
  });
  return toPage(window, totals!.total, records);
}
