import type { Executor } from '../db/client';
import { organizationPlans } from '../db/schema';
import { FREE_PLAN } from '../organizations/plans';

/** Puts a new organization on the free plan, active (lib/organizations/insert-organization.ts). */
export async function startOrganizationPlan(tx: Executor, organizationId: string): Promise<void> {
  const { type, seats, devices, storageBytes } = FREE_PLAN;
  await tx.insert(organizationPlans).values({ organizationId, type, seats, devices, storageBytes, isActive: true });
}
