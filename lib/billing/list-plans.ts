import { FREE_PLAN } from '../organizations/plans';
import { TIER_KEYS, TIERS } from './tiers';

/**
 * GET /billing/plans: the free plan, then the tier catalog, each with every limit enforced. The
 * free plan is listed for its limits, not to be selected: `selectable` false and no cadence (POST
 * /billing/plan takes only a tier); it is where every organization starts and what a delinquent
 * one that never paid is held to.
 */
export function listPlans() {
  const free = {
    key: 'free' as const,
    name: FREE_PLAN.name,
    monthlyPriceCents: 0,
    annualPriceCents: 0,
    seatCap: FREE_PLAN.seats,
    storageCapBytes: FREE_PLAN.storageBytes,
    deviceCap: FREE_PLAN.devices,
    casesPerMonth: FREE_PLAN.casesPerMonth,
    features: [...FREE_PLAN.features],
    cadences: [],
    annualOnly: false,
    includesPro: false,
    selectable: false,
  };
  return [free, ...TIER_KEYS.map((key) => ({ ...TIERS[key], selectable: true }))];
}
