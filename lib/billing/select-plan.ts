import { eq } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { SelectPlanDto } from '../../schemas/billing/billing';
import { recordAudit } from '../audit/record';
import type { Actor } from '../auth/actor';
import { addMonths, now } from '../clock';
import { config } from '../config';
import type { Tx } from '../db/client';
import { organizations } from '../db/schema/organizations';
import { type AfterCommit, transaction } from '../db/transaction';
import { type Finding, InvalidInputError } from '../errors';
import { newId } from '../ids';
import * as businessMetrics from '../observability/metrics';
import type { PlanUsage } from '../organizations/active-plan';
import { lockAllowances } from '../organizations/allowances';
import { setSelectedPlan } from '../organizations/billing-account';
import { setPlanAllowances } from './organization-plan';
import type { OrganizationContext } from '../organizations/context';
import { loadOrganization, type OrganizationRow } from '../organizations/load';
import { adjustCredits } from './adjust-credits';
import { settleCurrentBaseFee } from './base-fee-proration';
import { BILLING_ROW_STATUS } from './billing-row-lifecycle';
import { alignPlanPro } from './case-pro';
import { ensureProcessorCustomer } from './customers';
import { DelinquentPlanChangeError, PlanBelowUsageError, SelfServePlansOffError } from './errors';
import { recordBillingHistory } from './history';
import { type ChargeLine, recordCharge } from './record-charge';
import { createSetupSession } from './setup-sessions';
import { isDelinquent } from './summary';
import { basePriceCents, type Cadence, isDowngrade, isTierKey, planAllowancesOf, TIERS, type TierKey } from './tiers';

type SelectPlanInput = z.output<typeof SelectPlanDto>;
type Tier = (typeof TIERS)[TierKey];
type BillingRow = Awaited<ReturnType<typeof recordCharge>>['rows'][number];
type Selection = { tier: TierKey; cadence: Cadence };

/** What was asked and settled before the transaction: read by every step after it. */
interface PlanRequest {
  organizationId: string;
  actor: Actor;
  input: SelectPlanInput;
  tier: Tier;
  cadence: Cadence;
  paymentRequired: boolean;
  setupSession: Awaited<ReturnType<typeof createSetupSession>> | null;
}

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
  const cadence = cadenceOf(tier, input);
  const { organization: before, paymentRequired } = await loadForSelection(organizationId, input);
  // Every processor call the answer needs is made before anything is committed: with the processor
  // down the request is 503 and the plan unchanged, never a changed plan behind a failed answer.
  const setupSession = paymentRequired ? await createSetupSession(before, input as Required<SelectPlanInput>) : null;
  const request: PlanRequest = { organizationId, actor, input, tier, cadence, paymentRequired, setupSession };
  if (isSameSelection(before, input.tier, cadence)) {
    await transaction(async (tx) => recordSelectionAudit(tx, request, before, null));
    return planAnswer(request, 0);
  }
  const prorationCents = await transaction((tx, afterCommit) => changePlan(tx, afterCommit, request));
  return planAnswer(request, prorationCents);
}

/** The cadence asked for, or the tier's own (annual for an annual-only tier); 400 when the tier is not billed so. */
function cadenceOf(tier: Tier, input: SelectPlanInput): Cadence {
  const cadence: Cadence = input.cadence ?? (tier.annualOnly ? 'annual' : 'monthly');
  if (!tier.cadences.includes(cadence)) {
    throw new InvalidInputError([{ field: 'cadence', message: `${tier.name} (${tier.key}) is billed annually only` }]);
  }
  return cadence;
}

/**
 * The organization the selection starts from, and whether the answer must carry a card set-up
 * link (no card on file). Such a link needs the return URLs (400 without them) and a processor
 * customer: created now (idempotent), before anything is committed, rather than answer an error
 * after the plan has already changed.
 */
async function loadForSelection(
  organizationId: string,
  input: SelectPlanInput,
): Promise<{ organization: OrganizationRow; paymentRequired: boolean }> {
  const organization = await loadOrganization(organizationId);
  const paymentRequired = !organization.hasPaymentMethod;
  if (paymentRequired) assertSetupUrls(input);
  if (paymentRequired && !organization.processorCustomerId) {
    await ensureProcessorCustomer(organizationId);
    return { organization: await loadOrganization(organizationId), paymentRequired };
  }
  return { organization, paymentRequired };
}

/** 400 for each of successUrl and cancelUrl missing when no card is on file. */
function assertSetupUrls(input: SelectPlanInput): void {
  if (input.successUrl && input.cancelUrl) return;
  const missing = (['successUrl', 'cancelUrl'] as const).filter((field) => !input[field]);
  throw new InvalidInputError(
    missing.map((field) => ({
      field,
      message: `No card is on file: successUrl and cancelUrl are required to set one up`,
    })),
  );
}

/** The answer of POST /billing/plan. */
function planAnswer(request: PlanRequest, prorationCents: number) {
  return {
    tier: request.input.tier,
    cadence: request.cadence,
    billingMode: 'pay_as_you_go' as const,
    prorationCents,
    paymentRequired: request.paymentRequired,
    setupSessionUrl: request.setupSession?.url ?? null,
  };
}

/** The selection's audit event; `change` null when nothing changed (already the plan selected). */
function recordSelectionAudit(
  tx: Tx,
  request: PlanRequest,
  current: OrganizationRow,
  change: { chargeKey: string; prorationCents: number } | null,
) {
  const { organizationId, input, cadence } = request;
  return recordAudit(tx, {
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
      paymentRequired: request.paymentRequired,
      setupSessionId: request.setupSession?.id ?? null,
    },
  });
}

/**
 * The change, under the organization's lock: caps checked and set, the current base fee settled,
 * the new one charged, the plan recorded, plan-Pro aligned, a downgrade's difference credited.
 * Returns the proration (0 on a first selection).
 */
async function changePlan(tx: Tx, afterCommit: AfterCommit, request: PlanRequest): Promise<number> {
  const { organizationId, input, tier, cadence } = request;
  // Lock order (lib/organizations/allowances.ts): the organization row, then the allowances.
  const current = await lockOrganization(tx, organizationId);
  // A concurrent identical request (a double click) committed first: nothing left to change or charge.
  if (isSameSelection(current, input.tier, cadence)) {
    recordSelectionAudit(tx, request, current, null);
    return 0;
  }
  const usage = await lockAllowances(tx, organizationId);
  assertTierFits(usage, input.tier);
  const from = currentSelectionOf(current);
  assertMayChangeWhileDelinquent(current, from, { tier: input.tier, cadence });
  // Read under the lock, so the period of a change committed meanwhile is never credited beyond its start.
  const at = now();
  const periodEnd = addMonths(at, cadence === 'annual' ? 12 : 1);
  const settlement = from
    ? await settleCurrentBaseFee(tx, afterCommit, current, from, at)
    : { lines: [], outstanding: false };
  const chargeKey = newBaseFeeChargeKey(organizationId, at, { tier: input.tier, cadence });
  const lines: ChargeLine[] = [baseFeeLine(tier, cadence, at, periodEnd), ...settlement.lines];
  await setPlanAllowances(tx, organizationId, planAllowancesOf(input.tier));
  const { rows } = await recordCharge(tx, afterCommit, {
    organizationId,
    chargeKey,
    lines,
    createdById: request.actor.user.id,
    // The fee is for the tier selected: its features decide which credits may pay it.
    creditsFeature: tier.features.includes('credits'),
  });
  await setSelectedPlan(tx, organizationId, {
    billingMode: 'pay_as_you_go',
    billingTier: input.tier,
    billingCadence: cadence,
    billingPeriodStart: at,
    billingPeriodEnd: periodEnd,
    baseFeeChargeKey: chargeKey,
    baseFeeFailedAt: delinquentSince(current, rows, settlement.outstanding, at),
  });
  // Pro through the plan follows the new plan: ended when it has no Pro, restored when it has.
  await alignPlanPro(tx, organizationId, 'plan_selected');
  const net = lines.reduce((sum, line) => sum + line.quantity * line.unitAmountCents, 0);
  if (net < 0) await creditDowngradeDifference(tx, afterCommit, organizationId, tier, -net);
  await recordSelectionHistory(tx, request, current, from, net);
  recordSelectionAudit(tx, request, current, { chargeKey, prorationCents: from ? net : 0 });
  return from ? net : 0;
}

/** The organization row, locked FOR NO KEY UPDATE for the rest of the transaction. */
async function lockOrganization(tx: Tx, organizationId: string): Promise<OrganizationRow> {
  const [current] = await tx
    .select()
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('no key update');
  return current!;
}

/** The tier and cadence the organization is on, or null when it is not on a tier yet. */
function currentSelectionOf(current: OrganizationRow): Selection | null {
  const onTier =
    current.billingMode === 'pay_as_you_go' && isTierKey(current.billingTier) && current.billingCadence !== null;
  return onTier ? { tier: current.billingTier as TierKey, cadence: current.billingCadence! } : null;
}

/** A delinquent organization may only move down (409 DELINQUENT otherwise). */
function assertMayChangeWhileDelinquent(current: OrganizationRow, from: Selection | null, to: Selection): void {
  if (isDelinquent(current) && !(from && isDowngrade(from, to))) {
    throw new DelinquentPlanChangeError();
  }
}

/**
 * Unique per change: a double click is already stopped by the same-selection check under the
 * lock, and two changes in one millisecond (tier1, tier5, tier1) must not share a key.
 */
const newBaseFeeChargeKey = (organizationId: string, at: Date, to: Selection) =>
  `base-fee:${organizationId}:${at.getTime()}:${to.tier}:${to.cadence}:${newId()}`;

/** The new period's base fee line. */
function baseFeeLine(tier: Tier, cadence: Cadence, at: Date, periodEnd: Date): ChargeLine {
  return {
    caseId: null,
    skuKey: `platform_base_fee_${tier.key}_${cadence}`,
    description: `${tier.name} plan base fee (${cadence}) ${at.toISOString().slice(0, 10)} to ${periodEnd.toISOString().slice(0, 10)}`,
    quantity: 1,
    unitAmountCents: basePriceCents(tier.key, cadence),
    periodStart: at,
    periodEnd,
  };
}

/**
 * The delinquency clock after the change: stopped when the new charge is settled; started at the
 * selection when there is no card to collect it with; otherwise it keeps the time of an earlier
 * unpaid fee whose arrears this charge carries (a plan switch never resets it).
 */
function delinquentSince(current: OrganizationRow, rows: BillingRow[], outstanding: boolean, at: Date): Date | null {
  const settled = rows.every((row) => row.status === BILLING_ROW_STATUS.paid);
  if (settled) return null;
  if (!current.hasPaymentMethod) return current.baseFeeFailedAt ?? at;
  return outstanding ? current.baseFeeFailedAt : null;
}

/** A downgrade worth less than what was paid for the rest of the period: the difference becomes credits. */
async function creditDowngradeDifference(
  tx: Tx,
  afterCommit: AfterCommit,
  organizationId: string,
  tier: Tier,
  creditCents: number,
): Promise<void> {
  await adjustCredits(
    tx,
    organizationId,
    creditCents,
    'proration',
    `Unused base fee after moving to ${tier.name}`,
    null,
  );
  afterCommit(async () => businessMetrics.creditsAdded(creditCents));
}

/** The billing history entry of a change (or of a first selection). */
async function recordSelectionHistory(
  tx: Tx,
  request: PlanRequest,
  current: OrganizationRow,
  from: Selection | null,
  net: number,
): Promise<void> {
  const { organizationId, input, tier, cadence } = request;
  await recordBillingHistory(tx, {
    organizationId,
    category: 'subscription',
    description: from
      ? `Plan changed from ${from.tier} (${from.cadence}) to ${input.tier} (${cadence}); net ${net} cents`
      : `Plan ${tier.name} (${cadence}) selected${current.billingMode === 'legacy' ? ', moved off the legacy subscription' : ''}`,
    createdById: request.actor.user.id,
    metadata: { tier: input.tier, cadence, prorationCents: from ? net : 0 },
  });
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
