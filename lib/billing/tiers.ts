/**
 * The self-serve tier catalog, in one place: base prices in integer cents, caps and features.
 * Served by GET /billing/plans and read by plan selection, usage and charges.
 */
export const CADENCES = ['monthly', 'annual'] as const;
export type Cadence = (typeof CADENCES)[number];

const GiB = 1024 ** 3;

export interface Tier {
  key: TierKey;
  name: string;
  monthlyPriceCents: number | null;
  annualPriceCents: number;
  seatCap: number;
  storageCapBytes: number;
  deviceCap: number;
  casesPerMonth: number | null;
  features: Feature[];
  cadences: Cadence[];
  annualOnly: boolean;
  /** Every case of the organization is Pro without a per-case charge. */
  includesPro: boolean;
}

export const TIER_KEYS = ['tier1', 'tier2', 'tier3', 'tier4', 'tier5', 'tier6', 'tier7'] as const;
export type TierKey = (typeof TIER_KEYS)[number];

/** The evidence features: in every tier and in the free plan. */
export const EVIDENCE_FEATURES = [
  'email_evidence',
  'professional_network_evidence',
  'chat_platform_evidence',
  'device_notes',
] as const;
const EVIDENCE = [...EVIDENCE_FEATURES];

/**
 * Every feature the catalog lists (docs/decisions.md, "the feature matrix"). `billing_reports`
 * gates POST /billing/report; `credits` lets granted credits pay charges (lib/billing/record-charge.ts);
 * `pro_cases_included` is Pro through the plan; `priority_support` and `dedicated_storage` are
 * service commitments kept by people and infrastructure, not by the API.
 */
export const FEATURES = [
  ...EVIDENCE_FEATURES,
  'billing_reports',
  'credits',
  'pro_cases_included',
  'priority_support',
  'dedicated_storage',
] as const;
export type Feature = (typeof FEATURES)[number];

function tier(
  key: TierKey,
  name: string,
  monthly: number | null,
  annual: number,
  caps: Omit<Tier, 'key' | 'name' | 'monthlyPriceCents' | 'annualPriceCents' | 'cadences' | 'annualOnly'>,
): Tier {
  return {
    key,
    name,
    monthlyPriceCents: monthly,
    annualPriceCents: annual,
    cadences: monthly === null ? ['annual'] : ['monthly', 'annual'],
    annualOnly: monthly === null,
    ...caps,
  };
}

export const TIERS: Record<TierKey, Tier> = {
  tier1: tier('tier1', 'Solo', 4_900, 49_000, {
    seatCap: 2,
    storageCapBytes: 25 * GiB,
    deviceCap: 2,
    casesPerMonth: 5,
    features: EVIDENCE,
    includesPro: false,
  }),
  tier2: tier('tier2', 'Practice', 9_900, 99_000, {
    seatCap: 5,
    storageCapBytes: 100 * GiB,
    deviceCap: 5,
    casesPerMonth: 20,
    features: EVIDENCE,
    includesPro: false,
  }),
  tier3: tier('tier3', 'Team', 19_900, 199_000, {
    seatCap: 10,
    storageCapBytes: 250 * GiB,
    deviceCap: 10,
    casesPerMonth: 50,
    features: [...EVIDENCE, 'billing_reports'],
    includesPro: false,
  }),
  tier4: tier('tier4', 'Firm', 39_900, 399_000, {
    seatCap: 25,
    storageCapBytes: 500 * GiB,
    deviceCap: 25,
    casesPerMonth: 150,
    features: [...EVIDENCE, 'billing_reports', 'credits'],
    includesPro: false,
  }),
  tier5: tier('tier5', 'Firm Pro', 79_900, 799_000, {
    seatCap: 50,
    storageCapBytes: 1024 * GiB,
    deviceCap: 50,
    casesPerMonth: null,
    features: [...EVIDENCE, 'billing_reports', 'credits', 'pro_cases_included'],
    includesPro: true,
  }),
  tier6: tier('tier6', 'Enterprise', null, 1_499_000, {
    seatCap: 100,
    storageCapBytes: 2048 * GiB,
    deviceCap: 100,
    casesPerMonth: null,
    features: [...EVIDENCE, 'billing_reports', 'credits', 'pro_cases_included', 'priority_support'],
    includesPro: true,
  }),
  tier7: tier('tier7', 'Enterprise Plus', null, 2_999_000, {
    seatCap: 250,
    storageCapBytes: 5120 * GiB,
    deviceCap: 250,
    casesPerMonth: null,
    features: [
      ...EVIDENCE,
      'billing_reports',
      'credits',
      'pro_cases_included',
      'priority_support',
      'dedicated_storage',
    ],
    includesPro: true,
  }),
};

/**
 * Why the enforced caps are what they are (lib/billing/enforced-plan.ts):
 * - `selected`: the selected tier, its base fee paid (or nothing owed);
 * - `awaiting_payment`: the selected tier, its fee unpaid but still within the days it may be paid;
 * - `last_paid`: delinquent, so the tier last paid for (never above the one selected);
 * - `free`: delinquent with no tier ever paid for: the free plan's caps;
 * - `plan`: not on a self-serve tier (the free plan, a legacy plan): the plan row's own caps.
 */
export const ENFORCED_PLAN_BASES = ['selected', 'awaiting_payment', 'last_paid', 'free', 'plan'] as const;
export type EnforcedPlanBasis = (typeof ENFORCED_PLAN_BASES)[number];

/** The cheapest tier whose features include `feature` (null when none does). */
export function lowestTierWith(feature: Feature): TierKey | null {
  return TIER_KEYS.find((key) => TIERS[key].features.includes(feature)) ?? null;
}

/** One-time charge that makes a case Pro on tiers that do not include it. */
export const PRO_UPGRADE_SKU = {
  key: 'case_pro_upgrade',
  unitAmountCents: 14_900,
  description: 'Pro upgrade of case',
} as const;

export function basePriceCents(tierKey: TierKey, cadence: Cadence): number {
  const t = TIERS[tierKey];
  return cadence === 'annual' ? t.annualPriceCents : t.monthlyPriceCents!;
}

export function isTierKey(value: string | null | undefined): value is TierKey {
  return (TIER_KEYS as readonly string[]).includes(value ?? '');
}

/** The allowances a tier puts in the organization's plan row (the plan enforced). */
export function planAllowancesOf(tierKey: TierKey): {
  type: TierKey;
  seats: number;
  devices: number;
  storageBytes: number;
} {
  const t = TIERS[tierKey];
  return { type: tierKey, seats: t.seatCap, devices: t.deviceCap, storageBytes: t.storageCapBytes };
}

/**
 * Whether moving from one tier and cadence to another lowers what the organization pays: a lower
 * tier, or the same tier at a cadence with a lower base price. Only such moves are open to a
 * delinquent organization.
 */
export function isDowngrade(
  from: { tier: TierKey; cadence: Cadence },
  to: { tier: TierKey; cadence: Cadence },
): boolean {
  const rank = (key: TierKey) => TIER_KEYS.indexOf(key);
  if (rank(to.tier) !== rank(from.tier)) return rank(to.tier) < rank(from.tier);
  return basePriceCents(to.tier, to.cadence) < basePriceCents(from.tier, from.cadence);
}
