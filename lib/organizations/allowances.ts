import { and, count, eq, gte } from 'drizzle-orm';
import { now } from '../clock';
import type { Executor } from '../db/client';
import { cases } from '../db/schema/cases';
import { organizationPlans } from '../db/schema/organizations';
import { type PlanUsage, planUsageByOrganization } from './active-plan';
import { CaseLimitReachedError, DeviceLimitReachedError, NoPlanError, StorageLimitReachedError } from './errors';

/**
 * The plan's allowances (seats, devices, storage) and what uses them, read under a lock on the
 * organization's plan row. Every path that consumes an allowance (invitations, device
 * registration, upload links, imports) and every path that changes the caps (plan selection)
 * takes this lock before it counts, so N concurrent requests can never exceed a cap.
 *
 * Lock order, the same everywhere: the organization row first when a path needs it (FOR NO KEY
 * UPDATE, which does not block the foreign-key checks of inserts), then the plan row, then the
 * rows a path writes under it: a case row (note import, email importer), then a device row (note
 * import; see lib/material/notes.ts).
 */
export async function lockAllowances(tx: Executor, organizationId: string): Promise<PlanUsage> {
  await lockPlanRow(tx, organizationId);
  const usage = (await planUsageByOrganization(tx, [organizationId])).get(organizationId);
  if (!usage) throw new NoPlanError();
  return usage;
}

/** Takes the allowance lock (the organization's plan row) for the rest of the transaction. */
export async function lockPlanRow(tx: Executor, organizationId: string): Promise<void> {
  await tx
    .select({ id: organizationPlans.id })
    .from(organizationPlans)
    .where(eq(organizationPlans.organizationId, organizationId))
    .for('update');
}

/** Bytes still free under the storage cap: the cap minus what cases hold and what upload links promise. */
export function remainingStorageBytes(usage: PlanUsage): number {
  return usage.plan.storageBytes - usage.storageUsed - usage.storageReserved;
}

/** 403 STORAGE_LIMIT_REACHED unless `bytes` more fit under the plan's storage cap. */
export function assertStorageFits(usage: PlanUsage, bytes: number): void {
  if (bytes <= 0) return;
  const remaining = remainingStorageBytes(usage);
  if (bytes > remaining) {
    throw new StorageLimitReachedError(usage, bytes);
  }
}

/** 403 DEVICE_LIMIT_REACHED unless one more device fits under the plan's device cap. */
export function assertDeviceFits(usage: PlanUsage): void {
  if (usage.devicesUsed >= usage.plan.devices) {
    throw new DeviceLimitReachedError(usage.plan.devices);
  }
}

/**
 * The usage as it is once `releasedBytes` of upload-link reservations are consumed: an import that
 * links reserved keys replaces their declared sizes with the objects' actual ones, so its own
 * reservations must not count against it. Every reservation row counts in the usage, its link
 * expired or not (planUsageByOrganization), so `releasedBytes` is the sum of every row taken over.
 */
export function releasingReservations(usage: PlanUsage, releasedBytes: number): PlanUsage {
  return { ...usage, storageReserved: Math.max(0, usage.storageReserved - releasedBytes) };
}

/** The calendar month (UTC) `at` falls in: its first instant, and the first of the next, when the case allowance resets. */
export function caseMonthOf(at: Date = now()): { start: Date; resetsAt: Date } {
  return {
    start: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)),
    resetsAt: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)),
  };
}

/**
 * Cases the organization created this calendar month (UTC), deleted ones included: a delete gives
 * no allowance back, or creating and deleting would get round the cap. POST /cases checks it under
 * the allowance lock; GET /billing/plan/current reports it.
 */
export async function casesCreatedThisMonth(executor: Executor, organizationId: string): Promise<number> {
  const [row] = await executor
    .select({ n: count() })
    .from(cases)
    .where(and(eq(cases.organizationId, organizationId), gte(cases.createdAt, caseMonthOf().start)));
  return row?.n ?? 0;
}

/**
 * 403 CASE_LIMIT_REACHED unless one more case fits under the enforced plan's cases a month. The
 * caller holds the allowance lock (lockAllowances) in the transaction that inserts the case, so
 * concurrent requests count each other's cases.
 */
export async function assertCaseFits(tx: Executor, usage: PlanUsage): Promise<void> {
  const cap = usage.enforced.casesPerMonth;
  if (cap === null) return;
  const created = await casesCreatedThisMonth(tx, usage.plan.organizationId);
  if (created >= cap) throw new CaseLimitReachedError(cap, created, caseMonthOf().resetsAt);
}
