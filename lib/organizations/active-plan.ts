import { and, count, eq, gt, inArray, sql } from 'drizzle-orm';
import { type EnforcedPlan, enforcedPlanOf } from '../billing/enforced-plan';
import { BILLING_ROW_STATUS, sqlStatuses } from '../billing/billing-row-lifecycle';
import { type BillingSummary, DELINQUENCY_DAYS } from '../billing/summary';
import { addDays, now } from '../clock';
import type { Executor } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { cases, devices } from '../db/schema/cases';
import {
  invitations,
  organizationMembers,
  organizationPlans,
  organizations,
  storageReservations,
} from '../db/schema/organizations';
import { generatedDocuments } from '../db/schema/storage';

type PlanRow = typeof organizationPlans.$inferSelect;

export interface PlanUsage {
  /** The plan row, its caps those enforced (`enforced.caps`). */
  plan: PlanRow;
  /** Which plan's caps are enforced and why (benefits follow payment). */
  enforced: EnforcedPlan;
  seatsUsed: number;
  devicesUsed: number;
  /** Bytes kept: the cases' objects and derived rows (deleted cases too), and generated documents not yet removed. */
  storageUsed: number;
  /**
   * Declared bytes of upload links not yet used: unexpired, or lapsed with their object not yet
   * removed by maintenance (held against the cap, not shown as used).
   */
  storageReserved: number;
}

/**
 * Each organization's plan with what it uses, in one query whatever the number of organizations:
 * seats (members plus unexpired pending invitations), devices, the bytes it keeps and the bytes
 * promised to upload links.
 *
 * Storage counts what is kept until it is removed: a case's objects (storage_bytes) and the rows
 * derived from its files (row_bytes), also once the case is deleted (a soft delete removes
 * nothing); generated documents until maintenance removes them; and every upload link's
 * reservation until an import takes it over or maintenance removes its lapsed upload
 * (lib/material/lapsed-uploads.ts), whether or not the link has expired.
 */
export async function planUsageByOrganization(
  executor: Executor,
  organizationIds: string[],
): Promise<Map<string, PlanUsage>> {
  if (organizationIds.length === 0) return new Map();
  const at = now();
  const members = executor
    .select({ n: count() })
    .from(organizationMembers)
    .where(eq(organizationMembers.organizationId, organizationPlans.organizationId));
  const pending = executor
    .select({ n: count() })
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationPlans.organizationId),
        eq(invitations.status, 'pending'),
        gt(invitations.expiresAt, at),
      ),
    );
  const deviceCount = executor
    .select({ n: count() })
    .from(devices)
    .where(eq(devices.organizationId, organizationPlans.organizationId));
  const storage = executor
    .select({ n: sql`coalesce(sum(${cases.storageBytes} + ${cases.rowBytes}), 0)` })
    .from(cases)
    .where(eq(cases.organizationId, organizationPlans.organizationId));
  const generated = executor
    .select({ n: sql`coalesce(sum(${generatedDocuments.bytes}), 0)` })
    .from(generatedDocuments)
    .where(eq(generatedDocuments.organizationId, organizationPlans.organizationId));
  const reserved = executor
    .select({ n: sql`coalesce(sum(${storageReservations.bytes}), 0)` })
    .from(storageReservations)
    .where(eq(storageReservations.organizationId, organizationPlans.organizationId));
  const rows = await executor
    .select({
      plan: organizationPlans,
      ...standingColumns(at),
      seatsUsed: sql<number>`((${members}) + (${pending}))::int`,
      devicesUsed: sql<number>`(${deviceCount})::int`,
      storageUsed: sql<number>`((${storage}) + (${generated}))::bigint`.mapWith(Number),
      storageReserved: sql<number>`(${reserved})::bigint`.mapWith(Number),
    })
    .from(organizationPlans)
    .innerJoin(organizations, eq(organizations.id, organizationPlans.organizationId))
    .where(inArray(organizationPlans.organizationId, organizationIds));
  return new Map(
    rows.map(({ plan, standing, lastPaidTier, ...used }) => {
      const enforced = enforcedPlanOf(standing, plan, lastPaidTier);
      // Every check reads `plan`'s caps: they are the caps enforced, not always the row's.
      return [plan.organizationId, { plan: { ...plan, ...enforced.caps }, enforced, ...used }];
    }),
  );
}

/**
 * What decides the plan enforced, read beside the plan row: the organization's billing standing
 * and, only for a delinquent one, the tier of its last paid base fee (the CASE keeps Postgres from
 * running the subquery for the others).
 */
function standingColumns(at: Date) {
  return {
    standing: {
      billingMode: organizations.billingMode,
      billingTier: organizations.billingTier,
      baseFeeFailedAt: organizations.baseFeeFailedAt,
    },
    lastPaidTier: sql<
      string | null
    >`case when ${organizations.baseFeeFailedAt} < ${sql.param(addDays(at, -DELINQUENCY_DAYS), organizations.baseFeeFailedAt)} then (
    select substring(${billingRows.skuKey} from '^platform_base_fee_(tier[0-9]+)_')
    from ${billingRows}
    where ${billingRows.organizationId} = ${organizationPlans.organizationId}
      and ${billingRows.status} = ${sqlStatuses(BILLING_ROW_STATUS.paid)} and ${billingRows.amountCents} > 0
      and ${billingRows.skuKey} like 'platform_base_fee_tier%'
    order by ${billingRows.createdAt} desc limit 1) end`,
  };
}

/**
 * The plan enforced for one organization without counting what it uses: for checks that need its
 * features or Pro, not its caps against usage (one query; null without a plan row).
 */
export async function enforcedPlanOfOrganization(
  executor: Executor,
  organizationId: string,
): Promise<EnforcedPlan | null> {
  const [row] = await executor
    .select({ plan: organizationPlans, ...standingColumns(now()) })
    .from(organizationPlans)
    .innerJoin(organizations, eq(organizations.id, organizationPlans.organizationId))
    .where(eq(organizationPlans.organizationId, organizationId));
  return row ? enforcedPlanOf(row.standing, row.plan, row.lastPaidTier) : null;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/** The contract's activePlan object. `subscription` is null on every public route. */
export function toActivePlanEntity(
  { plan, seatsUsed, devicesUsed, storageUsed }: PlanUsage,
  subscription: BillingSummary | { billingMode: 'legacy' } | null = null,
) {
  const units = { Kb: 1024, Mb: 1024 ** 2, Gb: 1024 ** 3, Tb: 1024 ** 4 } as const;
  return {
    id: plan.id,
    subscription,
    relatedSubscription: null,
    organization: null,
    seats: plan.seats,
    seatsUsed,
    devices: plan.devices,
    deviceUsed: devicesUsed,
    storage: plan.storageBytes,
    storageUsed,
    payments: null,
    type: plan.type,
    isActive: plan.isActive,
    isBetweenPlanChanges: plan.isBetweenPlanChanges,
    storageInKb: round2(plan.storageBytes / units.Kb),
    storageUsedInKb: round2(storageUsed / units.Kb),
    storageInMb: round2(plan.storageBytes / units.Mb),
    storageUsedInMb: round2(storageUsed / units.Mb),
    storageInGb: round2(plan.storageBytes / units.Gb),
    storageUsedInGb: round2(storageUsed / units.Gb),
    storageInTb: round2(plan.storageBytes / units.Tb),
    storageUsedInTb: round2(storageUsed / units.Tb),
    isFreePlan: plan.type === 'free',
    remainingSeats: Math.max(0, plan.seats - seatsUsed),
    remainingDevices: Math.max(0, plan.devices - devicesUsed),
    remainingStorage: Math.max(0, plan.storageBytes - storageUsed),
    createdAt: plan.createdAt.toISOString(),
    updatedAt: plan.updatedAt.toISOString(),
  };
}

export type ActivePlanEntity = ReturnType<typeof toActivePlanEntity>;
