import { addDays, now } from '../clock';
import type { organizations } from '../db/schema/organizations';
import { BILLING_ROW_STATUS, isOpen } from './billing-row-lifecycle';

type OrganizationRow = typeof organizations.$inferSelect;

/** Days after a failed base fee that an organization counts as delinquent. */
export const DELINQUENCY_DAYS = 7;

export const BASE_FEE_STATUSES = ['paid', 'open', 'failed', 'none'] as const;
export type BaseFeeStatus = (typeof BASE_FEE_STATUSES)[number];

/** What the current period's base fee row says: nothing owed when there is none, or it was waived or voided. */
export function baseFeeStatusOf(feeRowStatus: string | undefined): BaseFeeStatus {
  if (feeRowStatus === BILLING_ROW_STATUS.paid) return 'paid';
  if (feeRowStatus === BILLING_ROW_STATUS.failed) return 'failed';
  if (feeRowStatus !== undefined && isOpen(feeRowStatus)) return 'open';
  return 'none';
}

export interface BillingSummary {
  billingMode: 'free' | 'pay_as_you_go';
  onCaseBilling: boolean;
  tier: string | null;
  cadence: 'monthly' | 'annual' | null;
  hasPaymentMethod: boolean;
  delinquent: boolean;
}

export function isDelinquent(organization: Pick<OrganizationRow, 'baseFeeFailedAt'>): boolean {
  const failedAt = organization.baseFeeFailedAt;
  return failedAt !== null && addDays(failedAt, DELINQUENCY_DAYS) < now();
}

/** The billing summary carried by organization details; null for a legacy-billed organization. */
export function billingSummary(organization: OrganizationRow): BillingSummary | null {
  if (organization.billingMode === 'legacy') return null;
  return {
    billingMode: organization.billingMode,
    onCaseBilling: organization.billingMode === 'pay_as_you_go',
    tier: organization.billingTier,
    cadence: organization.billingCadence,
    hasPaymentMethod: organization.hasPaymentMethod,
    delinquent: isDelinquent(organization),
  };
}
