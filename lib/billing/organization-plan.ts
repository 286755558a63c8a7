import { eq } from 'drizzle-orm';
import type { Executor, Tx } from '../db/client';
import { organizationPlans } from '../db/schema/organizations';
import { FREE_PLAN } from '../organizations/plans';

// The one writer of `organization_plans`: the caps an organization's plan gives it.

/** Puts a new organization on the free plan, active (lib/organizations/insert-organization.ts). */
export async function startOrganizationPlan(tx: Executor, organizationId: string): Promise<void> {
  const { type, seats, devices, storageBytes } = FREE_PLAN;
  await tx.insert(organizationPlans).values({ organizationId, type, seats, devices, storageBytes, isActive: true });
}

/** The caps of the plan enforced (a tier's allowances), made active. */
export async function setPlanAllowances(
  tx: Tx,
  organizationId: string,
  allowances: { type: string; seats: number; devices: number; storageBytes: number },
): Promise<void> {
  await tx
    .update(organizationPlans)
    .set({ ...allowances, isActive: true })
    .where(eq(organizationPlans.organizationId, organizationId));
}
