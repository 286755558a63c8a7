import { and, count, desc, eq, gte, isNull, sql } from 'drizzle-orm';
import { addMonths, now } from '../clock';
import { config } from '../config';
import { db } from '../db/client';
import { billingRows, cases, creditLedger, organizations, usageEvents } from '../db/schema';
import { transaction } from '../db/transaction';
import { ConflictError, ForbiddenError, ValidationFailedError } from '../http/errors';
import type { Actor } from '../http/types';
import { planUsageByOrganization } from '../organizations/active-plan';
import { caseForBilling } from './cases';
import { adjustCredits, recordCharge } from './charges';
import { ensureProcessorCustomer } from './customers';
import { recordBillingHistory } from './history';
import { paymentProcessor } from './processor';
import { isDelinquent } from './summary';
import { basePriceCents, type Cadence, PRO_UPGRADE_SKU, TIER_KEYS, TIERS, type TierKey, isTierKey } from './tiers';

type OrganizationRow = typeof organizations.$inferSelect;

async function loadOrganization(organizationId: string): Promise<OrganizationRow> {
  const [organization] = await db().select().from(organizations).where(eq(organizations.id, organizationId)).limit(1);
  return organization!;
}

function assertCaseBilling(organization: OrganizationRow): void {
  if (organization.billingMode !== 'pay_as_you_go') {
    throw new ForbiddenError('Case billing is not enabled for this organization: select a plan first', 'FEATURE_DISABLED');
  }
}

/**
 * POST /cases/{caseId}/pro-upgrade: records the one-time charge (once per case, whatever the
 * number of concurrent requests: the charge key is unique) and answers `processing`; the case
 * turns Pro when the invoice is paid, or at once when the tier includes Pro.
 */
export async function upgradeCaseToPro(organizationId: string, actor: Actor, caseId: string) {
  const organization = await loadOrganization(organizationId);
  assertCaseBilling(organization);
  const target = await caseForBilling(organizationId, caseId, actor.user.id);
  if (target.isPro) throw new ConflictError('The case is already Pro');
  const includesPro = isTierKey(organization.billingTier) && TIERS[organization.billingTier].includesPro;

  await transaction(async (tx, afterCommit) => {
    if (includesPro) {
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
          idempotencyKey: `case-pro-upgrade:${caseId}:0`,
          chargeKey: `case-pro-upgrade:${caseId}`,
          createdById: actor.user.id,
        })
        .onConflictDoNothing()
        .returning({ id: billingRows.id });
      await tx.update(cases).set({ isPro: true }).where(eq(cases.id, caseId));
      if (row) await recordBillingHistory(tx, { organizationId, category: 'case_billing', caseId, description: `Case "${target.name}" upgraded to Pro (included in plan)`, createdById: actor.user.id });
      return;
    }
    const { created } = await recordCharge(tx, afterCommit, {
      organizationId,
      chargeKey: `case-pro-upgrade:${caseId}`,
      createdById: actor.user.id,
      lines: [{ caseId, skuKey: PRO_UPGRADE_SKU.key, description: `${PRO_UPGRADE_SKU.description} "${target.name}"`, quantity: 1, unitAmountCents: PRO_UPGRADE_SKU.unitAmountCents }],
    });
    if (created) {
      await recordBillingHistory(tx, { organizationId, category: 'case_billing', caseId, description: `Pro upgrade of case "${target.name}" charged`, createdById: actor.user.id });
    }
  });
  return { caseId, status: 'processing' as const };
}

/** POST /billing/setup-session: a processor checkout in setup mode (card on file, no charge). */
export async function createSetupSession(organizationId: string, input: { successUrl: string; cancelUrl: string }) {
  const organization = await loadOrganization(organizationId);
  assertCaseBilling(organization);
  return { url: await setupSessionUrl(organization, input) };
}

async function setupSessionUrl(organization: OrganizationRow, input: { successUrl: string; cancelUrl: string }): Promise<string> {
  if (!organization.processorCustomerId) throw new ConflictError('The billing profile has no payment-processor customer yet; try again shortly');
  const processor = await paymentProcessor();
  const session = await processor.createSetupSession({
    customerId: organization.processorCustomerId,
    successUrl: input.successUrl,
    cancelUrl: input.cancelUrl,
    // One session per organization and minute: a double click reuses it, a later visit gets a fresh one.
    idempotencyKey: `setup-session:${organization.id}:${Math.floor(now().getTime() / 60_000)}`,
  });
  return session.url;
}

interface SelectPlanInput {
  tier: TierKey;
  cadence?: Cadence;
  successUrl?: string;
  cancelUrl?: string;
}

/**
 * POST /billing/plan: moves the organization onto a self-serve tier in pay-as-you-go mode (off a
 * legacy subscription on first selection), or changes tier or cadence. A change settles the
 * current base fee at once: the unused part of the period is credited against the new fee and
 * the net is `prorationCents` (0 on a first selection). Without a card on file the answer says
 * `paymentRequired` with a card set-up link.
 */
export async function selectPlan(organizationId: string, actor: Actor, input: SelectPlanInput) {
  if (!config().FEATURE_SELF_SERVE_PLANS) throw new ForbiddenError('Self-serve plan selection is not available', 'FEATURE_DISABLED');
  const tier = TIERS[input.tier];
  const cadence: Cadence = input.cadence ?? (tier.annualOnly ? 'annual' : 'monthly');
  if (!tier.cadences.includes(cadence)) {
    throw new ValidationFailedError([{ path: 'body.cadence', message: `${tier.name} (${tier.key}) is billed annually only` }]);
  }
  let before = await loadOrganization(organizationId);
  const paymentRequired = !before.hasPaymentMethod;
  if (paymentRequired && (!input.successUrl || !input.cancelUrl)) {
    const missing = (['successUrl', 'cancelUrl'] as const).filter((field) => !input[field]);
    throw new ValidationFailedError(missing.map((field) => ({ path: `body.${field}`, message: `No card is on file: successUrl and cancelUrl are required to set one up` })));
  }
  if (paymentRequired && !before.processorCustomerId) {
    // The set-up link needs a processor customer: create it now (idempotent), before anything is
    // committed, rather than answer an error after the plan has already changed.
    await ensureProcessorCustomer(organizationId);
    before = await loadOrganization(organizationId);
  }
  if (before.billingMode === 'pay_as_you_go' && before.billingTier === input.tier && before.billingCadence === cadence) {
    return { tier: input.tier, cadence, billingMode: 'pay_as_you_go' as const, prorationCents: 0, paymentRequired, setupSessionUrl: paymentRequired ? await setupSessionUrl(before, input as Required<SelectPlanInput>) : null };
  }

  const prorationCents = await transaction(async (tx, afterCommit) => {
    const [organization] = await tx.select().from(organizations).where(eq(organizations.id, organizationId)).for('update');
    const current = organization!;
    // A concurrent identical request (a double click) committed first: nothing left to change or charge.
    if (current.billingMode === 'pay_as_you_go' && current.billingTier === input.tier && current.billingCadence === cadence) return 0;
    // Read under the lock, so the period of a change committed meanwhile is never credited beyond its start.
    const at = now();
    const firstSelection = current.billingMode !== 'pay_as_you_go' || !isTierKey(current.billingTier) || !current.billingCadence;
    const newFee = basePriceCents(input.tier, cadence);
    const periodEnd = addMonths(at, cadence === 'annual' ? 12 : 1);
    let unusedCredit = 0;
    if (!firstSelection && current.billingPeriodStart && current.billingPeriodEnd && current.billingPeriodEnd > at) {
      const oldFee = basePriceCents(current.billingTier as TierKey, current.billingCadence!);
      const period = current.billingPeriodEnd.getTime() - current.billingPeriodStart.getTime();
      unusedCredit = Math.floor((oldFee * (current.billingPeriodEnd.getTime() - at.getTime())) / period);
    }
    const lines = [
      {
        caseId: null,
        skuKey: `platform_base_fee_${input.tier}_${cadence}`,
        description: `${tier.name} plan base fee (${cadence}) ${at.toISOString().slice(0, 10)} to ${periodEnd.toISOString().slice(0, 10)}`,
        quantity: 1,
        unitAmountCents: newFee,
        periodStart: at,
        periodEnd,
      },
      ...(unusedCredit > 0
        ? [{ caseId: null, skuKey: 'platform_base_fee_proration', description: `Unused part of the ${current.billingTier} ${current.billingCadence} base fee`, quantity: 1, unitAmountCents: -unusedCredit }]
        : []),
    ];
    await tx
      .update(organizations)
      .set({ billingMode: 'pay_as_you_go', billingTier: input.tier, billingCadence: cadence, billingPeriodStart: at, billingPeriodEnd: periodEnd })
      .where(eq(organizations.id, organizationId));
    await recordCharge(tx, afterCommit, { organizationId, chargeKey: `base-fee:${organizationId}:${at.getTime()}:${input.tier}:${cadence}`, lines, createdById: actor.user.id });
    const net = firstSelection ? 0 : newFee - unusedCredit;
    if (net < 0) {
      // A downgrade worth less than what is left of the period: the difference becomes credits.
      await adjustCredits(tx, organizationId, -net, 'proration', `Unused base fee after moving to ${tier.name}`, null);
    }
    await recordBillingHistory(tx, {
      organizationId,
      category: 'subscription',
      description: firstSelection
        ? `Plan ${tier.name} (${cadence}) selected${current.billingMode === 'legacy' ? ', moved off the legacy subscription' : ''}`
        : `Plan changed from ${current.billingTier} (${current.billingCadence}) to ${input.tier} (${cadence}); net ${net} cents`,
      createdById: actor.user.id,
      metadata: { tier: input.tier, cadence, prorationCents: net },
    });
    return net;
  });

  return {
    tier: input.tier,
    cadence,
    billingMode: 'pay_as_you_go' as const,
    prorationCents,
    paymentRequired,
    setupSessionUrl: paymentRequired ? await setupSessionUrl(await loadOrganization(organizationId), input as Required<SelectPlanInput>) : null,
  };
}

/** GET /billing/plans: the tier catalog. */
export function listPlans() {
  return TIER_KEYS.map((key) => TIERS[key]);
}

/** GET /billing/plan/current: plan (null when not on case billing), usage against caps, delinquency. */
export async function currentPlan(organizationId: string) {
  const organization = await loadOrganization(organizationId);
  const monthStart = new Date(Date.UTC(now().getUTCFullYear(), now().getUTCMonth(), 1));
  const [usage, [aiTokens], [casesThisMonth]] = await Promise.all([
    planUsageByOrganization(db(), [organizationId]),
    db()
      .select({ total: sql<number>`coalesce(sum(${usageEvents.quantity}), 0)::bigint`.mapWith(Number) })
      .from(usageEvents)
      .where(and(eq(usageEvents.organizationId, organizationId), eq(usageEvents.kind, 'ai_tokens'), gte(usageEvents.createdAt, monthStart))),
    db()
      .select({ total: count() })
      .from(cases)
      .where(and(eq(cases.organizationId, organizationId), gte(cases.createdAt, monthStart), isNull(cases.deletedAt))),
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
          paymentMethod: organization.hasPaymentMethod ? { type: 'card' as const, last4: organization.paymentMethodLast4 } : null,
        }
      : null,
    usage: {
      seats: { used: plan?.seatsUsed ?? 0, cap: tier?.seatCap ?? plan?.plan.seats ?? 0 },
      storage: { usedBytes: plan?.storageUsed ?? 0, capBytes: tier?.storageCapBytes ?? plan?.plan.storageBytes ?? 0 },
      aiTokens: { usedThisMonth: aiTokens?.total ?? 0, cap: tier?.aiTokensPerMonth ?? 0 },
      cases: { createdThisMonth: casesThisMonth?.total ?? 0, cap: tier?.casesPerMonth ?? null },
    },
    delinquent: isDelinquent(organization),
  };
}

/** GET /billing/credits: balance, currency, deduct percentage and the ledger newest first. */
export async function credits(organizationId: string, query: { limit?: number; skip?: number }) {
  if (!config().FEATURE_CREDITS) throw new ForbiddenError('Credits are turned off', 'FEATURE_DISABLED');
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
      const [totals] = await tx.select({ total: count() }).from(creditLedger).where(eq(creditLedger.organizationId, organizationId));
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
      description: entry.description,
      billingRowId: entry.billingRowId,
      createdAt: entry.createdAt.toISOString(),
    })),
    total: totals?.total ?? 0,
    limit,
    skip,
  };
}
