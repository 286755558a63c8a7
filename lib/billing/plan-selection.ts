import { and, asc, eq, inArray } from 'drizzle-orm';
import { addMonths, now } from '../clock';
import { config } from '../config';
import type { Tx } from '../db/client';
import { billingRows, organizationPlans, organizations } from '../db/schema';
import { type AfterCommit, transaction } from '../db/transaction';
import type * as z from 'zod/mini';
import type { SelectPlanDto } from '../../schemas/billing/billing';
import { recordAudit } from '../audit';
import type { Actor } from '../auth/actor';
import type { OrganizationContext } from '../organizations/context';
import { type Finding, InvalidInputError } from '../errors';
import type { PlanUsage } from '../organizations/active-plan';
import { newId } from '../ids';
import * as businessMetrics from '../observability/metrics';
import { lockAllowances } from '../organizations/allowances';
import { loadOrganization, type OrganizationRow } from '../organizations/load';
import { adjustCredits, type ChargeLine, closeVoidedInvoice, recordCharge } from './charges';
import { ensureProcessorCustomer } from './customers';
import { whenPaymentsConfigured } from './processor';
import { DelinquentPlanChangeError, PlanBelowUsageError, SelfServePlansOffError } from './errors';
import { recordBillingHistory } from './history';
import { isDelinquent } from './summary';
import { basePriceCents, type Cadence, isDowngrade, isTierKey, planAllowancesOf, TIERS, type TierKey } from './tiers';
import { createSetupSession } from './setup-sessions';
import { alignPlanPro } from './case-pro';

type BillingRow = typeof billingRows.$inferSelect;

/** The old base fee's rows still waiting for money: voided (and re-billed for the used part) on a change. */
const UNPAID_STATUSES = ['processing', 'INVOICED', 'failed'] as const;

type SelectPlanInput = z.output<typeof SelectPlanDto>;

const isSameSelection = (organization: OrganizationRow, tier: TierKey, cadence: Cadence) =>
  organization.billingMode === 'pay_as_you_go' &&
  organization.billingTier === tier &&
  organization.billingCadence === cadence;

/**
 * POST /billing/plan: moves the organization onto a self-serve tier in pay-as-you-go mode (off a
 * legacy subscription on first selection), or changes tier or cadence. The tier's caps become the
 * plan enforced in the same transaction; a move below what is in use is refused (409
 * PLAN_BELOW_USAGE). A change settles the current base fee at once (see `settleCurrentBaseFee`)
 * and the net is `prorationCents` (0 on a first selection). Without a card on file the answer
 * says `paymentRequired` with a card set-up link, and the unpaid fee starts the delinquency clock.
 * Each selection answered records its audit event, in the transaction of the change (`changed:
 * false` when the plan was already the one selected, a repeat or a double click); a refused one
 * records none.
 */
export async function selectPlan(
  { organization: { id: organizationId }, actor }: { organization: OrganizationContext; actor: Actor },
  input: SelectPlanInput,
) {
  if (!config().FEATURE_SELF_SERVE_PLANS) throw new SelfServePlansOffError();
  const tier = TIERS[input.tier];
  const cadence: Cadence = input.cadence ?? (tier.annualOnly ? 'annual' : 'monthly');
  if (!tier.cadences.includes(cadence)) {
    throw new InvalidInputError([{ field: 'cadence', message: `${tier.name} (${tier.key}) is billed annually only` }]);
  }
  let before = await loadOrganization(organizationId);
  const paymentRequired = !before.hasPaymentMethod;
  if (paymentRequired && (!input.successUrl || !input.cancelUrl)) {
    const missing = (['successUrl', 'cancelUrl'] as const).filter((field) => !input[field]);
    throw new InvalidInputError(
      missing.map((field) => ({
        field,
        message: `No card is on file: successUrl and cancelUrl are required to set one up`,
      })),
    );
  }
  if (paymentRequired && !before.processorCustomerId) {
    // The set-up link needs a processor customer: create it now (idempotent), before anything is
    // committed, rather than answer an error after the plan has already changed.
    await ensureProcessorCustomer(organizationId);
    before = await loadOrganization(organizationId);
  }
  // Every processor call the answer needs is made before anything is committed: with the processor
  // down the request is 503 and the plan unchanged, never a changed plan behind a failed answer.
  const setupSession = paymentRequired ? await createSetupSession(before, input as Required<SelectPlanInput>) : null;
  const answer = (prorationCents: number) => ({
    tier: input.tier,
    cadence,
    billingMode: 'pay_as_you_go' as const,
    prorationCents,
    paymentRequired,
    setupSessionUrl: setupSession?.url ?? null,
  });
  const audit = (tx: Tx, current: OrganizationRow, change: { chargeKey: string; prorationCents: number } | null) =>
    recordAudit(tx, {
      action: 'billing.plan.selected',
      organizationId,
      target: { type: 'organization', id: organizationId },
      metadata: {
        tier: input.tier,
        cadence,
        previousTier: current.billingTier,
        previousCadence: current.billingCadence,
        previousBillingMode: current.billingMode,
        changed: change !== null,
        baseFeeCents: change ? basePriceCents(input.tier, cadence) : 0,
        prorationCents: change?.prorationCents ?? 0,
        chargeKey: change?.chargeKey ?? null,
        paymentRequired,
        setupSessionId: setupSession?.id ?? null,
      },
    });
  if (isSameSelection(before, input.tier, cadence)) {
    await transaction(async (tx) => audit(tx, before, null));
    return answer(0);
  }

  const prorationCents = await transaction(async (tx, afterCommit) => {
    // Lock order (lib/organizations/allowances.ts): the organization row, then the allowances.
    const [current] = await tx
      .select()
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('no key update');
    // A concurrent identical request (a double click) committed first: nothing left to change or charge.
    if (isSameSelection(current!, input.tier, cadence)) {
      audit(tx, current!, null);
      return 0;
    }
    const usage = await lockAllowances(tx, organizationId);
    assertTierFits(usage, input.tier);
    const onTier =
      current!.billingMode === 'pay_as_you_go' && isTierKey(current!.billingTier) && current!.billingCadence !== null;
    const from = onTier ? { tier: current!.billingTier as TierKey, cadence: current!.billingCadence! } : null;
    if (isDelinquent(current!) && !(from && isDowngrade(from, { tier: input.tier, cadence }))) {
      throw new DelinquentPlanChangeError();
    }
    // Read under the lock, so the period of a change committed meanwhile is never credited beyond its start.
    const at = now();
    const periodEnd = addMonths(at, cadence === 'annual' ? 12 : 1);
    const settlement = from
      ? await settleCurrentBaseFee(tx, afterCommit, current!, from, at)
      : { lines: [], outstanding: false };
    // Unique per change: a double click is already stopped by the same-selection check under the
    // lock, and two changes in one millisecond (tier1, tier5, tier1) must not share a key.
    const chargeKey = `base-fee:${organizationId}:${at.getTime()}:${input.tier}:${cadence}:${newId()}`;
    const lines: ChargeLine[] = [
      {
        caseId: null,
        skuKey: `platform_base_fee_${input.tier}_${cadence}`,
        description: `${tier.name} plan base fee (${cadence}) ${at.toISOString().slice(0, 10)} to ${periodEnd.toISOString().slice(0, 10)}`,
        quantity: 1,
        unitAmountCents: basePriceCents(input.tier, cadence),
        periodStart: at,
        periodEnd,
      },
      ...settlement.lines,
    ];
    await tx
      .update(organizationPlans)
      .set({ ...planAllowancesOf(input.tier), isActive: true })
      .where(eq(organizationPlans.organizationId, organizationId));
    const { rows } = await recordCharge(tx, afterCommit, {
      organizationId,
      chargeKey,
      lines,
      createdById: actor.user.id,
      // The fee is for the tier selected: its features decide which credits may pay it.
      creditsFeature: tier.features.includes('credits'),
    });
    // The delinquency clock: stopped when the new charge is settled; started at the selection
    // when there is no card to collect it with; otherwise it keeps the time of an earlier unpaid
    // fee whose arrears this charge carries (a plan switch never resets it).
    const settled = rows.every((row) => row.status === 'paid');
    const failedSince = settled
      ? null
      : !current!.hasPaymentMethod
        ? (current!.baseFeeFailedAt ?? at)
        : settlement.outstanding
          ? current!.baseFeeFailedAt
          : null;
    await tx
      .update(organizations)
      .set({
        billingMode: 'pay_as_you_go',
        billingTier: input.tier,
        billingCadence: cadence,
        billingPeriodStart: at,
        billingPeriodEnd: periodEnd,
        baseFeeChargeKey: chargeKey,
        baseFeeFailedAt: failedSince,
      })
      .where(eq(organizations.id, organizationId));
    // Pro through the plan follows the new plan: ended when it has no Pro, restored when it has.
    await alignPlanPro(tx, organizationId, 'plan_selected');
    const net = lines.reduce((sum, line) => sum + line.quantity * line.unitAmountCents, 0);
    if (net < 0) {
      // A downgrade worth less than what was paid for the rest of the period: the difference becomes credits.
      await adjustCredits(tx, organizationId, -net, 'proration', `Unused base fee after moving to ${tier.name}`, null);
      afterCommit(async () => businessMetrics.creditsAdded(-net));
    }
    await recordBillingHistory(tx, {
      organizationId,
      category: 'subscription',
      description: from
        ? `Plan changed from ${from.tier} (${from.cadence}) to ${input.tier} (${cadence}); net ${net} cents`
        : `Plan ${tier.name} (${cadence}) selected${current!.billingMode === 'legacy' ? ', moved off the legacy subscription' : ''}`,
      createdById: actor.user.id,
      metadata: { tier: input.tier, cadence, prorationCents: from ? net : 0 },
    });
    audit(tx, current!, { chargeKey, prorationCents: from ? net : 0 });
    return from ? net : 0;
  });

  return answer(prorationCents);
}

/** 409 PLAN_BELOW_USAGE when seats, devices or storage in use exceed the tier's caps; nothing changes. */
function assertTierFits(usage: PlanUsage, tierKey: TierKey): void {
  const caps = planAllowancesOf(tierKey);
  const storageInUse = usage.storageUsed + usage.storageReserved;
  const over: Finding[] = [
    ...(usage.seatsUsed > caps.seats
      ? [
          {
            path: 'seats',
            message: `${usage.seatsUsed} seats in use (members and pending invitations); ${tierKey} allows ${caps.seats}`,
          },
        ]
      : []),
    ...(usage.devicesUsed > caps.devices
      ? [{ path: 'devices', message: `${usage.devicesUsed} devices registered; ${tierKey} allows ${caps.devices}` }]
      : []),
    ...(storageInUse > caps.storageBytes
      ? [
          {
            path: 'storage',
            message: `${storageInUse} bytes in use (including upload links not used yet); ${tierKey} allows ${caps.storageBytes}`,
          },
        ]
      : []),
  ];
  if (over.length > 0) {
    throw new PlanBelowUsageError({ name: TIERS[tierKey].name, key: tierKey }, over);
  }
}

/**
 * Settles the base fee of the period being left, under the organization's lock, and returns the
 * lines the new charge carries for it. Proration never turns money not received into credit:
 *
 * - paid: the unused part of the period is credited (a negative line);
 * - unpaid (open, failed, or not invoiced yet): its rows are voided, its invoice is voided at the
 *   processor after commit (`closeVoidedInvoice`: money it took first is kept as credit), and the
 *   used part of the period is billed again in the new charge, less what was already received
 *   toward it (credits drawn, and credit lines it carried from the period before);
 * - waived, voided or missing: nothing was received and nothing is owed: no line.
 *
 * `outstanding` says whether the lines re-bill an unpaid fee (the delinquency clock keeps running).
 */
async function settleCurrentBaseFee(
  tx: Tx,
  afterCommit: AfterCommit,
  organization: OrganizationRow,
  from: { tier: TierKey; cadence: Cadence },
  at: Date,
): Promise<Proration> {
  const rows: BillingRow[] = organization.baseFeeChargeKey
    ? await tx
        .select()
        .from(billingRows)
        .where(eq(billingRows.chargeKey, organization.baseFeeChargeKey))
        .orderBy(asc(billingRows.idempotencyKey))
    : [];
  const fee = rows[0];
  const unpaid = fee !== undefined && (UNPAID_STATUSES as readonly string[]).includes(fee.status);
  if (unpaid) {
    await tx
      .update(billingRows)
      .set({ status: 'voided' })
      .where(
        and(
          eq(billingRows.chargeKey, organization.baseFeeChargeKey!),
          inArray(billingRows.status, [...UNPAID_STATUSES]),
        ),
      );
    if (fee.invoiceId) {
      const invoiceId = fee.invoiceId;
      afterCommit(() => whenPaymentsConfigured(() => closeVoidedInvoice(invoiceId)));
    }
  }
  return computeProration({
    from,
    period: { start: organization.billingPeriodStart, end: organization.billingPeriodEnd },
    at,
    fee:
      fee?.status === 'paid'
        ? { status: 'paid' }
        : unpaid
          ? {
              status: 'unpaid',
              invoiceId: fee.invoiceId,
              receivedCents: rows.reduce(
                (sum, row) => sum + row.creditsAppliedCents + (row.amountCents < 0 ? -row.amountCents : 0),
                0,
              ),
            }
          : null,
  });
}

/** The lines that settle the current base fee on a change, and whether they re-bill an unpaid fee. */
export interface Proration {
  lines: ChargeLine[];
  outstanding: boolean;
}

/**
 * The settlement of `settleCurrentBaseFee` without the database: the fee of `from` over its
 * period, split at `at` into a used and an unused part (floored to the cent). A paid fee credits
 * the unused part; an unpaid one (`receivedCents` already received toward it) bills the used
 * part again and credits what was received; no fee (waived, voided, missing) gives no line.
 */
export function computeProration(input: {
  from: { tier: TierKey; cadence: Cadence };
  period: { start: Date | null; end: Date | null };
  at: Date;
  fee: { status: 'paid' } | { status: 'unpaid'; invoiceId: string | null; receivedCents: number } | null;
}): Proration {
  const { from, at, fee } = input;
  const { start, end } = input.period;
  const oldFee = basePriceCents(from.tier, from.cadence);
  const unused =
    start && end && end > at
      ? Math.floor((oldFee * (end.getTime() - at.getTime())) / (end.getTime() - start.getTime()))
      : 0;
  const label = `${from.tier} ${from.cadence}`;
  const credit = (amount: number, description: string): ChargeLine[] =>
    amount > 0
      ? [{ caseId: null, skuKey: 'platform_base_fee_proration', description, quantity: 1, unitAmountCents: -amount }]
      : [];

  if (fee?.status === 'paid')
    return { lines: credit(unused, `Unused part of the ${label} base fee`), outstanding: false };
  if (!fee) return { lines: [], outstanding: false };

  const used = oldFee - unused;
  const voidedNote = fee.invoiceId ? `, invoice ${fee.invoiceId} voided` : '';
  return {
    lines: [
      ...(used > 0
        ? [
            {
              caseId: null,
              skuKey: 'platform_base_fee_used',
              description: `Used part of the unpaid ${label} base fee${voidedNote}`,
              quantity: 1,
              unitAmountCents: used,
            },
          ]
        : []),
      ...credit(fee.receivedCents, `Already paid toward the voided ${label} base fee`),
    ],
    outstanding: true,
  };
}
