import { addDays } from '../clock';
import { FREE_PLAN } from '../organizations/plans';
import { DELINQUENCY_DAYS, isDelinquent } from './summary';
import { type EnforcedPlanBasis, FEATURES, type Feature, isTierKey, TIER_KEYS, TIERS, type TierKey } from './tiers';

export interface EnforcedCaps {
  seats: number;
  devices: number;
  storageBytes: number;
}

/** The plan whose caps are enforced: benefits follow payment, not selection. */
export interface EnforcedPlan {
  /** The tier whose caps apply; null for the free plan or a legacy plan row. */
  tier: TierKey | null;
  basis: EnforcedPlanBasis;
  caps: EnforcedCaps;
  /** New cases a calendar month (UTC), null for no cap: the tier's, the free plan's, none for a legacy plan. */
  casesPerMonth: number | null;
  /** The features in force: the tier's, the free plan's, every one for a legacy plan. */
  features: readonly Feature[];
  /** Whether every case may be Pro through the plan (a Pro-including tier in force). */
  includesPro: boolean;
  /** Until when an unpaid selection's caps hold (`awaiting_payment`), else null. */
  payBy: Date | null;
}

export interface BillingStanding {
  billingMode: string;
  billingTier: string | null;
  baseFeeFailedAt: Date | null;
}

const rank = (tier: TierKey) => TIER_KEYS.indexOf(tier);

/**
 * The plan enforced for an organization, from its selection, its payment standing and the tier it
 * last paid a base fee for (`lastPaidTier`, read only when it is delinquent). A selection raises
 * the caps from the moment it commits, but an unpaid one only for its DELINQUENCY_DAYS; once
 * delinquent, anything new is held to the lower of the selected tier and the last one paid for
 * (the free plan when none was, each of its limits never above the selected tier's). Nothing
 * that exists is removed; paying lifts it at once, since payment clears the delinquency.
 */
export function enforcedPlanOf(
  organization: BillingStanding,
  planRow: EnforcedCaps,
  lastPaidTier: string | null,
): EnforcedPlan {
  const selected = organization.billingTier;
  if (organization.billingMode !== 'pay_as_you_go' || !isTierKey(selected)) {
    // A legacy subscription keeps what it had before the catalog's limits were enforced: no case
    // cap and every feature; any other organization off a tier is on the free plan.
    const legacy = organization.billingMode === 'legacy';
    return {
      tier: null,
      basis: 'plan',
      caps: { seats: planRow.seats, devices: planRow.devices, storageBytes: planRow.storageBytes },
      casesPerMonth: legacy ? null : FREE_PLAN.casesPerMonth,
      features: legacy ? FEATURES : FREE_PLAN.features,
      includesPro: false,
      payBy: null,
    };
  }
  if (!isDelinquent(organization)) {
    const failedAt = organization.baseFeeFailedAt;
    return {
      ...tierPlan(selected),
      basis: failedAt ? 'awaiting_payment' : 'selected',
      payBy: failedAt ? addDays(failedAt, DELINQUENCY_DAYS) : null,
    };
  }
  if (isTierKey(lastPaidTier)) {
    const held = rank(lastPaidTier) < rank(selected) ? lastPaidTier : selected;
    // Pro through the plan needs the selected plan paid; a delinquent organization has no Pro by plan.
    return { ...tierPlan(held), includesPro: false, basis: 'last_paid', payBy: null };
  }
  // The free plan's limits, but never above the selected tier's: the free plan has more seats than
  // tier1, and not paying must never give more than paying would.
  const tier = tierPlan(selected);
  const lower = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  return {
    tier: null,
    basis: 'free',
    caps: {
      seats: Math.min(FREE_PLAN.seats, tier.caps.seats),
      devices: Math.min(FREE_PLAN.devices, tier.caps.devices),
      storageBytes: Math.min(FREE_PLAN.storageBytes, tier.caps.storageBytes),
    },
    casesPerMonth: lower(FREE_PLAN.casesPerMonth, tier.casesPerMonth),
    features: FREE_PLAN.features.filter((feature) => tier.features.includes(feature)),
    includesPro: false,
    payBy: null,
  };
}

/** No plan row at hand: the plan enforced as far as the billing standing alone decides it. */
const NO_PLAN_ROW: EnforcedCaps = { seats: 0, devices: 0, storageBytes: 0 };

/**
 * The plan enforced as the billing standing alone decides it, for what needs no caps (Pro through
 * the plan, features) or an organization without a plan row: a free or legacy plan gets no caps.
 */
export function enforcedStandingOf(organization: BillingStanding): EnforcedPlan {
  return enforcedPlanOf(organization, NO_PLAN_ROW, null);
}

/** What GET /billing/plan/current and usages-stat say of the plan enforced. */
export function toEnforcedPlanEntity(enforced: EnforcedPlan) {
  return {
    tier: enforced.tier,
    basis: enforced.basis,
    includesPro: enforced.includesPro,
    payBy: enforced.payBy?.toISOString() ?? null,
  };
}

function tierPlan(key: TierKey): Pick<EnforcedPlan, 'tier' | 'caps' | 'casesPerMonth' | 'features' | 'includesPro'> {
  const tier = TIERS[key];
  return {
    tier: key,
    caps: { seats: tier.seatCap, devices: tier.deviceCap, storageBytes: tier.storageCapBytes },
    casesPerMonth: tier.casesPerMonth,
    features: tier.features,
    includesPro: tier.includesPro,
  };
}
