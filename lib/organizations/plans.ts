import { EVIDENCE_FEATURES } from '../billing/tiers';

/**
 * The plan every new organization starts on (DESIGN.md): 5 seats, 2 devices, 5 GiB, no base fee;
 * 3 new cases a calendar month and the evidence features (docs/decisions.md, "the feature matrix").
 * GET /billing/plans lists it beside the tiers; the plan row holds its seats, devices and storage.
 */
export const FREE_PLAN = {
  type: 'free',
  name: 'Free',
  seats: 5,
  devices: 2,
  storageBytes: 5 * 1024 ** 3,
  casesPerMonth: 3,
  features: EVIDENCE_FEATURES,
} as const;
