import type { Executor } from '../db/client';
import { enforcedPlanOfOrganization } from '../organizations/active-plan';
import type { EnforcedPlan } from './enforced-plan';
import { FeatureNotInPlanError } from './errors';
import { type Feature, lowestTierWith, TIERS } from './tiers';

/**
 * Features follow the plan enforced (lib/billing/enforced-plan.ts), like the caps: the selected
 * tier's while it is paid or within its days to pay, the last paid tier's (or the free plan's)
 * once delinquent, every feature for a legacy subscription.
 */
export function planIncludes(enforced: EnforcedPlan | null, feature: Feature): boolean {
  return enforced?.features.includes(feature) ?? false;
}

/** 403 FEATURE_NOT_IN_PLAN unless the plan enforced for the organization includes `feature`. */
export async function assertFeatureInPlan(executor: Executor, organizationId: string, feature: Feature): Promise<void> {
  if (planIncludes(await enforcedPlanOfOrganization(executor, organizationId), feature)) return;
  const lowest = lowestTierWith(feature);
  throw new FeatureNotInPlanError(feature, lowest ? TIERS[lowest] : null);
}
