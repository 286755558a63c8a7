import type * as z from 'zod/mini';
import { and, eq } from 'drizzle-orm';
import { db } from '../db/client';
import { devices } from '../db/schema/cases';
import type { UsagesStatQuery } from '../../schemas/organization/organization';
import { planUsageByOrganization, toActivePlanEntity } from './active-plan';
import type { OrganizationContext } from './context';
import { NoActivePlanRecordError } from './errors';
import { loadOrganization } from './load';
import { toEnforcedPlanEntity } from '../billing/enforced-plan';

/** GET /organization/{orgId}/usages-stat: plan allowances and use, and whether the device is new. */
export async function getOrganizationUsage(
  { organization }: { organization: OrganizationContext },
  query: z.output<typeof UsagesStatQuery>,
) {
  const [current, usage, device] = await Promise.all([
    loadOrganization(organization.id),
    planUsageByOrganization(db(), [organization.id]),
    query.deviceId
      ? db()
          .select({ id: devices.id })
          .from(devices)
          .where(and(eq(devices.organizationId, organization.id), eq(devices.deviceId, query.deviceId)))
          .limit(1)
      : Promise.resolve([]),
  ]);
  const plan = usage.get(organization.id);
  if (!plan) throw new NoActivePlanRecordError();
  const entity = toActivePlanEntity(plan);
  return {
    billingModel: current.billingMode,
    planType: entity.type,
    isPlanActive: entity.isActive,
    // A plan with no base fee owed is paid; a failed base fee makes it unpaid until settled.
    isPlanPaid: current.baseFeeFailedAt === null,
    enforcedPlan: toEnforcedPlanEntity(plan.enforced),
    seats: entity.seats,
    seatsUsed: entity.seatsUsed,
    remainingSeats: entity.remainingSeats,
    devices: entity.devices,
    devicesUsed: entity.deviceUsed,
    remainingDevices: entity.remainingDevices,
    storage: entity.storage,
    storageUsed: entity.storageUsed,
    remainingStorage: entity.remainingStorage,
    storageInKb: entity.storageInKb,
    storageUsedInKb: entity.storageUsedInKb,
    storageInMb: entity.storageInMb,
    storageUsedInMb: entity.storageUsedInMb,
    storageInGb: entity.storageInGb,
    storageUsedInGb: entity.storageUsedInGb,
    storageInTb: entity.storageInTb,
    storageUsedInTb: entity.storageUsedInTb,
    canManageBilling: ['owner', 'admin', 'billing'].includes(organization.role),
    isNewDevice: query.deviceId ? device.length === 0 : null,
  };
}
