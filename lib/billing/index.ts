import { asc, count, desc, eq, sql } from 'drizzle-orm';
import { config } from '../config';
import { db, type Tx } from '../db/client';
import { billingRows, cases, creditLedger, organizations } from '../db/schema';
import { transaction } from '../db/transaction';
import type * as z from 'zod/mini';
import type { CreateBillingSetupSessionDto, CreditsQuery } from '../../schemas/billing/billing';
import { recordAudit } from '../audit';
import type { Actor } from '../auth/actor';
import type { CaseContext } from '../cases/context';
import { planUsageByOrganization } from '../organizations/active-plan';
import { casesCreatedThisMonth } from '../organizations/allowances';
import type { OrganizationContext } from '../organizations/context';
import { loadOrganization, type OrganizationRow } from '../organizations/load';
import { FREE_PLAN } from '../organizations/plans';
import { staffCreditDescription } from './admin';
import { CaseAlreadyProError, CaseBillingOffError, CreditsOffError, DelinquentError } from './errors';
import { recordCharge } from './charges';
import { recordBillingHistory } from './history';
import { createSetupSession } from './setup-sessions';
import { baseFeeStatusOf, isDelinquent } from './summary';
import { isProNow } from './case-pro';
import { enforcedStandingOf, toEnforcedPlanEntity } from './enforced-plan';
import { basePriceCents, PRO_UPGRADE_SKU, TIER_KEYS, TIERS, type TierKey, isTierKey } from './tiers';

function assertCaseBilling(organization: OrganizationRow): void {
  if (organization.billingMode !== 'pay_as_you_go') {
    throw new CaseBillingOffError();
  }
}

/**
 * POST /cases/{caseId}/pro-upgrade: records the one-time charge (once per case, whatever the
 * number of concurrent requests: the charge key is unique) and answers `processing`; the case
 * turns Pro when the invoice is paid, or at once when the tier includes Pro. The request that
 * creates the charge records its audit event; a concurrent repeat that finds it records none.
 */
export async function upgradeCaseToPro(ctx: {
  actor: Actor;
  organization: OrganizationContext;
  caseContext: CaseContext;
}) {
  const { actor } = ctx;
  const organizationId = ctx.organization.id;
  const organization = await loadOrganization(organizationId);
  assertCaseBilling(organization);
  // The case-context middleware resolved the case and checked the billing rule.
  const target = ctx.caseContext.case;
  const caseId = target.id;
  if (isProNow(target)) throw new CaseAlreadyProError();
  if (isDelinquent(organization)) {
    throw new DelinquentError();
  }
  // Pro through the plan: a Pro-including tier, paid or within its days to pay (then Pro ends with them).
  const plan = enforcedStandingOf(organization);

  // The plan's row and a paid upgrade have keys of their own: a case that leaves the plan can still be charged.
  const chargeKey = plan.includesPro ? `case-pro-plan:${caseId}` : `case-pro-upgrade:${caseId}`;
  const audit = (tx: Tx, metadata: Record<string, unknown>) =>
    recordAudit(tx, {
      action: 'case.pro_upgrade.requested',
      organizationId,
      caseId,
      target: { type: 'case', id: caseId },
      metadata: { chargeKey, ...metadata },
    });

  await transaction(async (tx, afterCommit) => {
    if (plan.includesPro) {
      const [row] = await tx
        .insert(billingRows)
        .values({
          organizationId,
          caseId,
          skuKey: PRO_UPGRADE_SKU.key,
          description: `${PRO_UPGRADE_SKU.description} "${target.name}" (included in plan)`,
          quantity: 1,
          unitAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
          amountCents: PRO_UPGRADE_SKU.unitAmountCents,
          status: 'plan_included',
          informational: true,
          idempotencyKey: `${chargeKey}:0`,
          chargeKey,
          createdById: actor.user.id,
        })
        .onConflictDoNothing()
        .returning({ id: billingRows.id });
      await tx.update(cases).set({ isPro: true, proSource: 'plan', proUntil: plan.payBy }).where(eq(cases.id, caseId));
      if (row) {
        await recordBillingHistory(tx, {
          organizationId,
          category: 'case_billing',
          caseId,
          description: `Case "${target.name}" upgraded to Pro (included in plan)`,
          createdById: actor.user.id,
        });
        audit(tx, {
          billingRowId: row.id,
          amountCents: 0,
          listAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
          creditsAppliedCents: 0,
          invoicedCents: 0,
          paidWith: 'plan',
        });
      }
      return;
    }
    const { created, rows } = await recordCharge(tx, afterCommit, {
      organizationId,
      chargeKey,
      createdById: actor.user.id,
      lines: [
        {
          caseId,
          skuKey: PRO_UPGRADE_SKU.key,
          description: `${PRO_UPGRADE_SKU.description} "${target.name}"`,
          quantity: 1,
          unitAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
        },
      ],
    });
    if (created) {
      await recordBillingHistory(tx, {
        organizationId,
        category: 'case_billing',
        caseId,
        description: `Pro upgrade of case "${target.name}" charged`,
        createdById: actor.user.id,
      });
      const [charged] = rows;
      const creditsAppliedCents = charged!.creditsAppliedCents;
      const invoicedCents = charged!.amountCents - creditsAppliedCents;
      audit(tx, {
        billingRowId: charged!.id,
        amountCents: charged!.amountCents,
        listAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
        creditsAppliedCents,
        invoicedCents,
        // The invoiced part is collected with the card on file (or once one is saved).
        paidWith: invoicedCents === 0 ? 'credits' : creditsAppliedCents === 0 ? 'card' : 'credits_and_card',
      });
    }
  });
  return { caseId, status: 'processing' as const };
}

/**
 * POST /billing/setup-session: a processor checkout in setup mode (card on file, no charge). The
 * session lives at the processor, so its audit event commits in a transaction of its own once the
 * link exists (a link the processor refused to make records nothing).
 */
export async function createBillingSetupSession(
  ctx: { organization: OrganizationContext },
  input: z.output<typeof CreateBillingSetupSessionDto>,
) {
  const organization = await loadOrganization(ctx.organization.id);
  assertCaseBilling(organization);
  const session = await createSetupSession(organization, input);
  await transaction(async (tx) =>
    recordAudit(tx, {
      action: 'billing.setup_session.created',
      organizationId: organization.id,
      target: { type: 'setup_session', id: session.id },
      metadata: { successUrl: input.successUrl, cancelUrl: input.cancelUrl },
    }),
  );
  return { url: session.url };
}

export { createBillingReport } from './report';
export { listBillingHistory } from './history';
export { selectPlan } from './plan-selection';
export { getCaseStatement, getReconciliation } from './statements';
export { stripeWebhook } from './webhooks';

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

/** GET /billing/credits: balance, currency, deduct percentage and the ledger newest first. */
export async function getCredits(ctx: { organization: OrganizationContext }, query: z.output<typeof CreditsQuery>) {
  const organizationId = ctx.organization.id;
  if (!config().FEATURE_CREDITS) throw new CreditsOffError();
  const limit = query.limit ?? 50;
  const skip = query.skip ?? 0;
  // One snapshot: a charge committing between the reads must not show a balance the ledger
  // does not add up to.
  const { organization, ledger, totals } = await db().transaction(
    async (tx) => {
      const [organization] = await tx.select().from(organizations).where(eq(organizations.id, organizationId));
      const ledger = await tx
        .select()
        .from(creditLedger)
        .where(eq(creditLedger.organizationId, organizationId))
        .orderBy(desc(creditLedger.createdAt), desc(creditLedger.id))
        .limit(limit)
        .offset(skip);
      const [totals] = await tx
        .select({ total: count() })
        .from(creditLedger)
        .where(eq(creditLedger.organizationId, organizationId));
      return { organization: organization!, ledger, totals };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  return {
    balanceCents: organization.creditBalanceCents,
    currency: 'usd',
    effectiveDeductPercentage: organization.creditBalanceCents > 0 ? organization.creditDeductPercentage : 0,
    ledger: ledger.map((entry) => ({
      id: entry.id,
      amountCents: entry.amountCents,
      balanceAfterCents: entry.balanceAfterCents,
      kind: entry.kind,
      // Staff grants say what happened, never why (the reason stays in the hidden history field).
      description: entry.kind === 'grant' ? staffCreditDescription(entry.amountCents) : entry.description,
      billingRowId: entry.billingRowId,
      createdAt: entry.createdAt.toISOString(),
    })),
    total: totals?.total ?? 0,
    limit,
    skip,
  };
}
