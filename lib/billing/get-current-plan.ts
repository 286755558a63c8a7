import { asc, eq, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { organizations } from '../db/schema/organizations';
import { planUsageByOrganization } from '../organizations/active-plan';
import { casesCreatedThisMonth } from '../organizations/allowances';
import type { OrganizationContext } from '../organizations/context';
import { loadOrganization } from '../organizations/load';
import { enforcedStandingOf, toEnforcedPlanEntity } from './enforced-plan';
import { baseFeeStatusOf, isDelinquent } from './summary';
import { basePriceCents, isTierKey, TIERS, type TierKey } from './tiers';

/** GET /billing/plan/current: plan (null when not on case billing), usage against caps, delinquency. */
export async function getCurrentPlan(ctx: { organization: OrganizationContext }) {
  const organizationId = ctx.organization.id;
  const organization = await loadOrganization(organizationId);
  const [usage, casesThisMonth, [fee]] = await Promise.all([
    planUsageByOrganization(db(), [organizationId]),
    casesCreatedThisMonth(db(), organizationId),
    // The current period's base fee (the first row of its charge), by the key the organization keeps.
    db()
      .select({ status: billingRows.status })
      .from(billingRows)
      .where(
        eq(
          billingRows.chargeKey,
          sql`(select ${organizations.baseFeeChargeKey} from ${organizations} where ${organizations.id} = ${organizationId})`,
        ),
      )
      .orderBy(asc(billingRows.idempotencyKey))
      .limit(1),
  ]);
  const plan = usage.get(organizationId);
  const onCaseBilling = organization.billingMode === 'pay_as_you_go' && isTierKey(organization.billingTier);
  const tier = onCaseBilling ? TIERS[organization.billingTier as TierKey] : null;
  return {
    plan: tier
      ? {
          tier: tier.key,
          tierName: tier.name,
          cadence: organization.billingCadence,
          billingMode: organization.billingMode,
          basePriceCents: basePriceCents(tier.key, organization.billingCadence ?? 'monthly'),
          periodStart: organization.billingPeriodStart?.toISOString() ?? null,
          periodEnd: organization.billingPeriodEnd?.toISOString() ?? null,
          paymentMethod: organization.hasPaymentMethod
            ? { type: 'card' as const, last4: organization.paymentMethodLast4 }
            : null,
          baseFeeStatus: baseFeeStatusOf(fee?.status),
        }
      : null,
    // The caps enforced: the selected tier's while it is paid or within its days to pay, else the
    // last paid plan's (lib/billing/enforced-plan.ts).
    enforcedPlan: toEnforcedPlanEntity(plan?.enforced ?? enforcedStandingOf(organization)),
    usage: {
      seats: { used: plan?.seatsUsed ?? 0, cap: plan?.plan.seats ?? 0 },
      devices: { used: plan?.devicesUsed ?? 0, cap: plan?.plan.devices ?? 0 },
      storage: {
        usedBytes: plan?.storageUsed ?? 0,
        reservedBytes: plan?.storageReserved ?? 0,
        capBytes: plan?.plan.storageBytes ?? 0,
      },
      // The cap enforced on POST /cases (deleted cases count: a delete gives no case back).
      cases: { createdThisMonth: casesThisMonth, cap: plan?.enforced.casesPerMonth ?? null },
    },
    delinquent: isDelinquent(organization),
  };
}
