import type { OrganizationRow } from '../organizations/load';
import { CaseBillingOffError } from './errors';

/** Refuses (FEATURE_DISABLED) unless the organization is billed per case (pay as you go). */
export function assertCaseBilling(organization: OrganizationRow): void {
  if (organization.billingMode !== 'pay_as_you_go') {
    throw new CaseBillingOffError();
  }
}
