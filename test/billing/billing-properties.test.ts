import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { grantCredits } from '../../lib/billing/admin';
import { CHARGED_STATUSES } from '../../lib/billing/billing-row-lifecycle';
import { retryVoidedInvoices } from '../../lib/billing/close-voided-invoice';
import { retryStuckCharges } from '../../lib/billing/invoice-charge';
import { settleInvoice } from '../../lib/billing/settle-invoice';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { endLapsedPlanPro } from '../../lib/billing/case-pro';
import { isProNow } from '../../lib/cases/pro-status';
import { isDelinquent } from '../../lib/billing/summary';
import {
  type Cadence,
  isDowngrade,
  isTierKey,
  PRO_UPGRADE_SKU,
  TIER_KEYS,
  TIERS,
  type TierKey,
} from '../../lib/billing/tiers';
import { verifyBilling } from '../../lib/billing/verify';
import { now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import {
  billingRows,
  cases,
  creditLedger,
  organizationPlans,
  organizations,
  sandboxInvoices,
} from '../../lib/db/schema';
import { transaction } from '../../lib/db/transaction';
import { planUsageByOrganization } from '../../lib/organizations/active-plan';
import { FREE_PLAN } from '../../lib/organizations/plans';
import { addMember, createUser, type TestUser, uniqueEmail, signIn } from '../harness/actors';
import { type InvokeResult, invoke } from '../harness/invoke';
import { as, DECLINED_CARD, GOOD_CARD, sessionIdOf, urls } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';

/**
 * Issue 11 "Billing integrity", as a property: random sequences of plan selections, card set-ups,
 * Pro upgrades, staff credit grants, webhook payments and failures, members added, clock moves and
 * maintenance retries, each run in a fresh organization, all through the real handlers (or the
 * domain functions the webhook handler, the admin CLI and the maintenance job call). After every
 * step the money and the allowances must add up (see `checkInvariants`).
 */

type Step =
  | { kind: 'select'; tier: TierKey; cadence: Cadence | undefined }
  | { kind: 'card'; good: boolean; freshSession: boolean }
  | { kind: 'upgrade'; existing: number | null }
  | { kind: 'invite'; count: number }
  | { kind: 'case' }
  | { kind: 'grant'; cents: number }
  | { kind: 'webhook'; pick: number; outcome: 'paid' | 'failed' }
  | { kind: 'member'; count: number }
  | { kind: 'clock'; seconds: number }
  | { kind: 'maintenance' };

const selectArbitrary = fc.record({
  kind: fc.constant('select' as const),
  tier: fc.constantFrom(...TIER_KEYS),
  cadence: fc.option(fc.constantFrom<Cadence>('monthly', 'annual'), { nil: undefined }),
});

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: selectArbitrary },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('card' as const), good: fc.boolean(), freshSession: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('upgrade' as const),
      // A new case, or one of those already in the run (Pro through a plan left, or Pro already).
      existing: fc.option(fc.nat({ max: 99 }), { nil: null }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('invite' as const), count: fc.integer({ min: 1, max: 4 }) }) },
  // Clock steps of up to 40 days carry case creation across month boundaries.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('case' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('grant' as const), cents: fc.integer({ min: 1, max: 50_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('webhook' as const),
      pick: fc.nat({ max: 99 }),
      outcome: fc.constantFrom<'paid' | 'failed'>('paid', 'failed'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('member' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      seconds: fc.integer({ min: 3_600, max: 40 * 86_400 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('maintenance' as const) }) },
);

const describeStep = (step: Step): string => {
  switch (step.kind) {
    case 'select':
      return `select ${step.tier}${step.cadence ? ` ${step.cadence}` : ''}`;
    case 'card':
      return `card ${step.good ? 'good' : 'declined (0002)'} via ${step.freshSession ? 'a new set-up session a minute later' : 'the last set-up link'}`;
    case 'grant':
      return `grant ${step.cents} cents`;
    case 'member':
      return `add ${step.count} member(s)`;
    case 'invite':
      return `invite ${step.count}`;
    case 'upgrade':
      return step.existing === null ? 'upgrade a new case' : `upgrade case pick ${step.existing}`;
    case 'webhook':
      return `webhook ${step.outcome} (pick ${step.pick})`;
    case 'clock':
      return `clock +${step.seconds}s (${(step.seconds / 86_400).toFixed(2)} days)`;
    default:
      return step.kind;
  }
};

/** What one run knows beyond the database. */
interface Run {
  owner: TestUser;
  organizationId: string;
  /** The last card set-up link a selection answered (for a card step while not on a plan). */
  lastSetupUrl: string | null;
  granted: boolean;
  /** A member added by the test (bypassing the seat check) put seats used over the plan's cap. */
  overCapByTest: boolean;
  /** The cases the run made, in order. */
  caseIds: string[];
  trace: string[];
}

class PropertyFailure extends Error {}

function fail(run: Run, message: string, extra?: unknown): never {
  throw new PropertyFailure(
    `${message}${extra === undefined ? '' : `\n${JSON.stringify(extra, null, 2)}`}\n--- steps of this run (organization ${run.organizationId}) ---\n${run.trace.join('\n')}`,
  );
}

/** No 5xx ever, and only the answers the step allows. */
function expectAnswer(run: Run, what: string, result: InvokeResult, allowed: Array<[number, string?]>): void {
  if (result.status >= 500) fail(run, `${what}: answered ${result.status}`, result.body);
  const code: string | undefined = result.body?.error?.code;
  const ok = allowed.some(
    ([status, expectedCode]) => status === result.status && (expectedCode === undefined || expectedCode === code),
  );
  if (!ok)
    fail(
      run,
      `${what}: answered ${result.status} ${code ?? ''}, allowed ${allowed.map(([s, c]) => `${s}${c ? ` ${c}` : ''}`).join(' | ')}`,
      result.body,
    );
}

async function organizationOf(organizationId: string) {
  const [row] = await db().select().from(organizations).where(eq(organizations.id, organizationId));
  return row!;
}

async function usageOf(organizationId: string) {
  return (await planUsageByOrganization(db(), [organizationId])).get(organizationId)!;
}

async function rowsOf(organizationId: string) {
  return db().select().from(billingRows).where(eq(billingRows.organizationId, organizationId));
}

async function ledgerOf(organizationId: string) {
  return db().select().from(creditLedger).where(eq(creditLedger.organizationId, organizationId));
}

/** Sandbox invoices of the organization's processor customer that are paid: money actually received. */
async function paidInvoiceCents(customerId: string | null): Promise<number> {
  if (!customerId) return 0;
  const paid = await db()
    .select({ amountCents: sandboxInvoices.amountCents })
    .from(sandboxInvoices)
    .where(and(eq(sandboxInvoices.customerId, customerId), eq(sandboxInvoices.status, 'paid')));
  return paid.reduce((sum, invoice) => sum + invoice.amountCents, 0);
}

const cadenceOf = (tier: TierKey, cadence: Cadence | undefined): Cadence =>
  cadence ?? (TIERS[tier].annualOnly ? 'annual' : 'monthly');

async function selectStep(run: Run, step: Extract<Step, { kind: 'select' }>): Promise<string> {
  const before = await organizationOf(run.organizationId);
  const usageBefore = await usageOf(run.organizationId);
  const rowsBefore = (await rowsOf(run.organizationId)).length;
  const ledgerBefore = (await ledgerOf(run.organizationId)).length;
  const body = { tier: step.tier, ...(step.cadence ? { cadence: step.cadence } : {}), ...urls };
  const result = await invoke(routes.selectPlan, { ...as(run.owner), body });
  expectAnswer(run, describeStep(step), result, [
    [200],
    [409, 'PLAN_BELOW_USAGE'],
    [403, 'DELINQUENT'],
    [400, 'VALIDATION_FAILED'],
  ]);

  // A light model of which answer is due.
  const cadence = cadenceOf(step.tier, step.cadence);
  const cap = TIERS[step.tier].seatCap;
  const from =
    before.billingMode === 'pay_as_you_go' && isTierKey(before.billingTier) && before.billingCadence
      ? { tier: before.billingTier, cadence: before.billingCadence }
      : null;
  const same = from !== null && from.tier === step.tier && from.cadence === cadence;
  const expected: number = !TIERS[step.tier].cadences.includes(cadence)
    ? 400
    : same
      ? 200
      : usageBefore.seatsUsed > cap
        ? 409
        : isDelinquent(before) && !(from && isDowngrade(from, { tier: step.tier, cadence }))
          ? 403
          : 200;
  if (result.status !== expected) {
    fail(
      run,
      `${describeStep(step)}: answered ${result.status}, expected ${expected} (seats used ${usageBefore.seatsUsed}, cap ${cap}, delinquent ${isDelinquent(before)}, from ${JSON.stringify(from)})`,
      result.body,
    );
  }

  if (result.status !== 200) {
    // A refused selection changes nothing and charges nothing.
    const after = await organizationOf(run.organizationId);
    if (
      after.billingTier !== before.billingTier ||
      after.billingCadence !== before.billingCadence ||
      after.billingMode !== before.billingMode
    ) {
      fail(run, `${describeStep(step)}: refused with ${result.status} but the organization's plan changed`, {
        before,
        after,
      });
    }
    const rowsAfter = (await rowsOf(run.organizationId)).length;
    const ledgerAfter = (await ledgerOf(run.organizationId)).length;
    if (rowsAfter !== rowsBefore || ledgerAfter !== ledgerBefore)
      fail(run, `${describeStep(step)}: refused with ${result.status} but rows or ledger entries were written`);
    return `${result.status} ${result.body.error.code}`;
  }

  const data = result.body.data;
  if (data.setupSessionUrl) run.lastSetupUrl = data.setupSessionUrl;
  // Allowances >= usage right after a selection that committed, and the tier is the plan enforced.
  const after = await organizationOf(run.organizationId);
  if (after.billingMode !== 'pay_as_you_go' || after.billingTier !== step.tier || after.billingCadence !== cadence) {
    fail(
      run,
      `${describeStep(step)}: 200 but the organization is on ${after.billingMode} ${after.billingTier} ${after.billingCadence}`,
    );
  }
  // A repeat of the current selection changes nothing (seats the test added past the cap stay so).
  if (!same) {
    // Against the tier's cap: a delinquent organization's enforced caps may be below what exists.
    const usage = await usageOf(run.organizationId);
    if (usage.seatsUsed > cap)
      fail(run, `${describeStep(step)}: 200 leaves ${usage.seatsUsed} seats used over the tier's ${cap}`);
    run.overCapByTest = false;
  }
  return `200 proration ${data.prorationCents}${data.paymentRequired ? ', payment required' : ''}`;
}

async function cardStep(run: Run, step: Extract<Step, { kind: 'card' }>): Promise<string> {
  const organization = await organizationOf(run.organizationId);
  let url = run.lastSetupUrl;
  if (step.freshSession || url === null) {
    // Set-up sessions are one per organization and minute (a double click reuses one): a fresh one
    // is a visit at least a minute later. The frozen clock moves by it; the token (15 min) still holds.
    if (step.freshSession) testClock.advance(61);
    const result = await invoke(routes.createBillingSetupSession, { ...as(run.owner), body: urls });
    const onPlan = organization.billingMode === 'pay_as_you_go';
    expectAnswer(run, 'POST /billing/setup-session', result, onPlan ? [[200]] : [[403, 'FEATURE_DISABLED']]);
    if (result.status === 200) url = result.body.data.url;
  }
  if (url === null) return 'no set-up link';
  const completed = await completeSandboxCheckout(sessionIdOf(url), step.good ? GOOD_CARD : DECLINED_CARD);
  if (completed === null) return 'session already completed (null)';
  if (completed.successUrl !== urls.successUrl) fail(run, `card: checkout returned to ${completed.successUrl}`);
  return 'card saved';
}

async function upgradeStep(run: Run, step: Extract<Step, { kind: 'upgrade' }>): Promise<string> {
  const before = await organizationOf(run.organizationId);
  const caseId =
    step.existing !== null && run.caseIds.length > 0
      ? run.caseIds[step.existing % run.caseIds.length]!
      : (await caseWithAccess(run.organizationId, run.owner)).id;
  if (!run.caseIds.includes(caseId)) run.caseIds.push(caseId);
  const [target] = await db().select().from(cases).where(eq(cases.id, caseId));
  const result = await invoke(routes.upgradeCaseToPro, { ...as(run.owner), path: { caseId } });
  expectAnswer(run, 'upgrade', result, [[200], [403, 'FEATURE_DISABLED'], [403, 'DELINQUENT'], [409]]);
  const expected =
    before.billingMode !== 'pay_as_you_go'
      ? 'FEATURE_DISABLED'
      : isProNow(target!)
        ? 'CONFLICT'
        : isDelinquent(before)
          ? 'DELINQUENT'
          : null;
  const got = result.status === 200 ? null : (result.body.error.code as string);
  if (got !== expected)
    fail(run, `upgrade: answered ${result.status} ${got ?? ''}, expected ${expected ?? '200'}`, result.body);
  return result.status === 200 ? '200' : `${result.status} ${got}`;
}

/** Invitations take seats: granted exactly while they fit the caps enforced (the oracle below). */
async function inviteStep(run: Run, step: Extract<Step, { kind: 'invite' }>): Promise<string> {
  const organization = await organizationOf(run.organizationId);
  const usage = await usageOf(run.organizationId);
  const cap = (await expectedCapsOf(organization)).seats;
  const emails = Array.from({ length: step.count }, () => uniqueEmail('invite'));
  const result = await invoke(routes.inviteUsers, {
    token: run.owner.accessToken,
    path: { orgId: run.organizationId },
    body: { emails },
  });
  expectAnswer(run, describeStep(step), result, [[201], [403, 'SEAT_LIMIT_REACHED']]);
  const fits = usage.seatsUsed + step.count <= cap;
  if ((result.status === 201) !== fits)
    fail(run, `${describeStep(step)}: answered ${result.status} with ${usage.seatsUsed} seats used of ${cap} enforced`);
  return `${result.status} (${usage.seatsUsed}+${step.count} of ${cap})`;
}

/** POST /cases: granted exactly while the month's cases (deleted ones too) are below the cap enforced. */
async function caseStep(run: Run): Promise<string> {
  const organization = await organizationOf(run.organizationId);
  const at = now();
  const monthStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const createdThisMonth = (
    await db().select({ createdAt: cases.createdAt }).from(cases).where(eq(cases.organizationId, run.organizationId))
  ).filter((row) => row.createdAt >= monthStart).length;
  const cap = (await expectedCapsOf(organization)).casesPerMonth;
  const result = await invoke(routes.createCase, {
    ...as(run.owner),
    body: { name: `Matter ${createdThisMonth + 1}` },
  });
  expectAnswer(run, 'create case', result, [[201], [403, 'CASE_LIMIT_REACHED']]);
  const fits = cap === null || createdThisMonth < cap;
  if ((result.status === 201) !== fits)
    fail(run, `create case: answered ${result.status} with ${createdThisMonth} created this month of ${cap}`);
  if (result.status === 201) run.caseIds.push(result.body.data.id);
  return `${result.status} (${createdThisMonth} of ${cap ?? 'no cap'} this month)`;
}

/**
 * The caps that must be enforced, worked out apart from lib/billing/enforced-plan.ts: the tier's
 * while not delinquent; else the lower of the tier and the last tier whose base fee was paid, or
 * the free plan; the plan row's for an organization not on a tier.
 */
async function expectedCapsOf(organization: Awaited<ReturnType<typeof organizationOf>>) {
  if (organization.billingMode !== 'pay_as_you_go' || !isTierKey(organization.billingTier)) {
    const [row] = await db()
      .select()
      .from(organizationPlans)
      .where(eq(organizationPlans.organizationId, organization.id));
    const casesPerMonth = organization.billingMode === 'legacy' ? null : FREE_PLAN.casesPerMonth;
    return { seats: row!.seats, devices: row!.devices, storageBytes: row!.storageBytes, casesPerMonth };
  }
  const tier = TIERS[organization.billingTier];
  const rows = await rowsOf(organization.id);
  const lastPaid = rows
    .filter((r) => r.status === 'paid' && r.amountCents > 0 && /^platform_base_fee_tier\d_/.test(r.skuKey))
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0]
    ?.skuKey.split('_')[3] as TierKey | undefined;
  const held = !isDelinquent(organization)
    ? tier
    : lastPaid
      ? TIERS[TIER_KEYS.indexOf(lastPaid) < TIER_KEYS.indexOf(tier.key) ? lastPaid : tier.key]
      : null;
  return held
    ? {
        seats: held.seatCap,
        devices: held.deviceCap,
        storageBytes: held.storageCapBytes,
        casesPerMonth: held.casesPerMonth,
      }
    : {
        // The free plan's, never above the selected tier's (tier1 has fewer seats than the free plan).
        seats: Math.min(FREE_PLAN.seats, tier.seatCap),
        devices: Math.min(FREE_PLAN.devices, tier.deviceCap),
        storageBytes: Math.min(FREE_PLAN.storageBytes, tier.storageCapBytes),
        casesPerMonth: Math.min(FREE_PLAN.casesPerMonth, tier.casesPerMonth ?? Number.POSITIVE_INFINITY),
      };
}

async function webhookStep(run: Run, step: Extract<Step, { kind: 'webhook' }>): Promise<string> {
  const open = await db()
    .selectDistinct({ invoiceId: billingRows.invoiceId })
    .from(billingRows)
    .where(
      and(
        eq(billingRows.organizationId, run.organizationId),
        inArray(billingRows.status, ['INVOICED', 'failed']),
        isNotNull(billingRows.invoiceId),
      ),
    );
  const invoiceIds = open.map((o) => o.invoiceId!).sort();
  if (invoiceIds.length === 0) return 'no open invoice';
  const invoiceId = invoiceIds[step.pick % invoiceIds.length]!;
  if (step.outcome === 'paid') {
    // The processor collected it (a hosted-invoice payment, a retry): then Stripe sends invoice.paid.
    const [invoice] = await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.id, invoiceId));
    if (!invoice) fail(run, `webhook: rows name invoice ${invoiceId}, which the sandbox does not have`);
    if (invoice.status === 'void') fail(run, `webhook: rows INVOICED/failed on the void invoice ${invoiceId}`);
    await db()
      .update(sandboxInvoices)
      .set({ status: 'paid' })
      .where(and(eq(sandboxInvoices.id, invoiceId), eq(sandboxInvoices.status, 'open')));
  }
  const settled = await transaction((tx) => settleInvoice(tx, invoiceId, step.outcome));
  return `${step.outcome} ${settled} row(s) of ${invoiceId}`;
}

async function applyStep(run: Run, step: Step): Promise<string> {
  switch (step.kind) {
    case 'select':
      return selectStep(run, step);
    case 'card':
      return cardStep(run, step);
    case 'upgrade':
      return upgradeStep(run, step);
    case 'invite':
      return inviteStep(run, step);
    case 'case':
      return caseStep(run);
    case 'grant': {
      const balance = await grantCredits(run.organizationId, step.cents, 'reason');
      run.granted = true;
      return `balance ${balance}`;
    }
    case 'webhook':
      return webhookStep(run, step);
    case 'member': {
      for (let i = 0; i < step.count; i += 1) await addMember(run.organizationId, 'member');
      const usage = await usageOf(run.organizationId);
      if (usage.seatsUsed > usage.plan.seats) run.overCapByTest = true;
      return `seats ${usage.seatsUsed}/${usage.plan.seats}`;
    }
    case 'clock':
      testClock.advance(step.seconds);
      run.owner = await signIn(run.owner);
      return 'signed in again';
    case 'maintenance': {
      const voided = await retryVoidedInvoices(0);
      const retried = await retryStuckCharges(0);
      const proEnded = await endLapsedPlanPro();
      return `voided ${voided}, retried ${retried}, plan Pro ended ${proEnded}`;
    }
  }
}

/** The invariants of issue 11, after every step. */
async function checkInvariants(run: Run): Promise<void> {
  const { organizationId } = run;

  // 1. The admin check finds nothing to report.
  const verified = await verifyBilling(organizationId);
  const differences = verified.differences;
  const rows = await rowsOf(organizationId);
  if (verified.organizationsChecked !== 1 || differences.length > 0)
    fail(run, 'verifyBilling reports differences', verified);

  // 2. Balance = ledger sum, never negative, nor any balance after an entry.
  const organization = await organizationOf(organizationId);
  const ledger = await ledgerOf(organizationId);
  const ledgerSum = ledger.reduce((sum, entry) => sum + entry.amountCents, 0);
  if (organization.creditBalanceCents !== ledgerSum)
    fail(run, `credit balance ${organization.creditBalanceCents} != ledger sum ${ledgerSum}`, ledger);
  if (organization.creditBalanceCents < 0) fail(run, `credit balance ${organization.creditBalanceCents} < 0`);
  const negative = ledger.filter((entry) => entry.balanceAfterCents < 0);
  if (negative.length > 0) fail(run, 'ledger entries with a negative balance after them', negative);

  // 3. No credit without a paid source: credits other than staff grants (proration, refunds) are
  //    bounded by the money received (paid invoices) plus the credits spent (which were themselves received).
  const minted = ledger
    .filter((entry) => entry.kind !== 'grant' && entry.amountCents > 0)
    .reduce((sum, entry) => sum + entry.amountCents, 0);
  const drawn = -ledger.filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.amountCents, 0);
  const paid = await paidInvoiceCents(organization.processorCustomerId);
  if (minted > paid + drawn) {
    fail(
      run,
      `credits from no paid source: ${minted} cents of proration/refund credits, but only ${paid} cents of paid invoices and ${drawn} cents of credits drawn`,
      ledger,
    );
  }
  if (!run.granted && paid === 0 && organization.creditBalanceCents !== 0) {
    fail(run, `no grant and no invoice ever paid, yet the balance is ${organization.creditBalanceCents}`, ledger);
  }

  // 4. The tier chosen is the plan row; its caps are enforced while paid or within its days to pay,
  //    else the caps of the last tier paid for (never above the chosen one), or the free plan's.
  const usage = await usageOf(organizationId);
  if (organization.billingMode === 'pay_as_you_go') {
    if (!isTierKey(organization.billingTier)) fail(run, `pay_as_you_go with billing_tier ${organization.billingTier}`);
    const tier = TIERS[organization.billingTier];
    const [row] = await db()
      .select()
      .from(organizationPlans)
      .where(eq(organizationPlans.organizationId, organizationId));
    const stored = { type: row!.type, seats: row!.seats, devices: row!.devices, storageBytes: row!.storageBytes };
    const expectedRow = {
      type: tier.key,
      seats: tier.seatCap,
      devices: tier.deviceCap,
      storageBytes: tier.storageCapBytes,
    };
    if (JSON.stringify(stored) !== JSON.stringify(expectedRow))
      fail(run, 'organization_plans does not follow the tier', { stored, expectedRow });
    const enforced = { seats: usage.plan.seats, devices: usage.plan.devices, storageBytes: usage.plan.storageBytes };
    const { casesPerMonth: _, ...expectedCaps } = await expectedCapsOf(organization);
    if (JSON.stringify(enforced) !== JSON.stringify(expectedCaps))
      fail(run, 'the caps enforced do not follow payment', { enforced, expectedCaps });
  }

  // 5. Allowances >= usage, unless the test itself added a member past the cap (addMember bypasses the
  //    seat check), or delinquency lowered the caps below what already exists (nothing is removed).
  if (!run.overCapByTest && !isDelinquent(organization) && usage.seatsUsed > usage.plan.seats)
    fail(run, `${usage.seatsUsed} seats used over the plan's ${usage.plan.seats}`);

  // 6. Charged totals: the reconciliation's total = rows in a charged status, not informational.
  const charged = rows
    .filter((row) => (CHARGED_STATUSES as readonly string[]).includes(row.status) && !row.informational)
    .reduce((sum, row) => sum + row.amountCents, 0);
  const reconciliation = await invoke(routes.getReconciliation, as(run.owner));
  expectAnswer(run, 'GET /billing/reconciliation', reconciliation, [[200]]);
  if (reconciliation.body.data.totalChargedCents !== charged) {
    fail(
      run,
      `reconciliation totalChargedCents ${reconciliation.body.data.totalChargedCents} != ${charged} summed from the rows`,
    );
  }

  // 7 (reads keep working): the current plan answers, with the enforced caps.
  const current = await invoke(routes.getCurrentPlan, as(run.owner));
  expectAnswer(run, 'GET /billing/plan/current', current, [[200]]);
  if (current.body.data.usage.seats.cap !== usage.plan.seats)
    fail(run, `current plan shows a seat cap ${current.body.data.usage.seats.cap}, the plan row ${usage.plan.seats}`);

  // 9. No Pro without its money: each case Pro now has a paid Pro upgrade, or the organization has a
  //    Pro-including tier in force (paid, or within its days to pay).
  const proNow = (await db().select().from(cases).where(eq(cases.organizationId, organizationId))).filter(isProNow);
  const planInForce =
    organization.billingMode === 'pay_as_you_go' &&
    isTierKey(organization.billingTier) &&
    TIERS[organization.billingTier].includesPro &&
    !isDelinquent(organization);
  for (const pro of proNow) {
    const paidUpgrade = rows.some(
      (row) => row.caseId === pro.id && row.skuKey === PRO_UPGRADE_SKU.key && row.status === 'paid',
    );
    if (!paidUpgrade && !planInForce)
      fail(run, `case ${pro.id} is Pro (source ${pro.proSource}) with no paid upgrade and no Pro plan in force`);
  }

  // 8. Plan benefits are never free: on a tier, the current period's base fee is a charge of the
  //    tier's fee that is paid, open or failed (never voided, waived or missing: baseFeeStatus 'none').
  if (organization.billingMode === 'pay_as_you_go' && isTierKey(organization.billingTier)) {
    const feeRows = rows
      .filter((row) => row.chargeKey === organization.baseFeeChargeKey)
      .sort((a, b) => (a.idempotencyKey < b.idempotencyKey ? -1 : 1));
    const fee = feeRows[0];
    const sku = `platform_base_fee_${organization.billingTier}_${organization.billingCadence}`;
    const status = current.body.data.plan?.baseFeeStatus;
    if (!fee || fee.skuKey !== sku || !['paid', 'open', 'failed'].includes(status)) {
      fail(
        run,
        `on ${organization.billingTier} ${organization.billingCadence}, the current base fee is ${fee ? `${fee.skuKey} ${fee.status}` : 'missing'} (baseFeeStatus ${status})`,
        feeRows,
      );
    }
  }
}

/**
 * 25 runs of up to 10 steps (a few seconds on PGlite). To reproduce a failure, run it again with the
 * seed fast-check printed: BILLING_PROPERTY_SEED=<seed>; BILLING_PROPERTY_SHRINK=1 shrinks it to a
 * minimal sequence (off by default: endOnFailure keeps CI fast); BILLING_PROPERTY_RUNS=<n> runs more.
 */
const NUM_RUNS = Number(process.env.BILLING_PROPERTY_RUNS ?? 25);
const MAX_STEPS = 10;
const SEED = process.env.BILLING_PROPERTY_SEED;

describe('billing integrity (property)', () => {
  it(
    'random plan selections, card set-ups, Pro upgrades, grants, webhook settlements, members, clock moves and maintenance keep the money and allowances exact',
    async () => {
      await fc.assert(
        // Most runs start on a plan (the interesting part); some never select one.
        fc.asyncProperty(
          fc.option(selectArbitrary, { freq: 5, nil: undefined }),
          fc.array(stepArbitrary, { minLength: 2, maxLength: MAX_STEPS - 1 }),
          async (first, rest) => {
            const steps: Step[] = first ? [first, ...rest] : rest;
            testClock.reset();
            testClock.freeze();
            const owner = await createUser();
            const run: Run = {
              owner,
              organizationId: owner.organizationId,
              lastSetupUrl: null,
              granted: false,
              overCapByTest: false,
              caseIds: [],
              trace: [],
            };
            await checkInvariants(run);
            for (const [index, step] of steps.entries()) {
              // Requests are never at the same instant (see the known-bug test below): a second passes before each.
              testClock.advance(1);
              run.trace.push(`${index + 1}. ${describeStep(step)}`);
              const outcome = await applyStep(run, step);
              run.trace[run.trace.length - 1] += ` -> ${outcome}`;
              await checkInvariants(run);
            }
          },
        ),
        {
          numRuns: NUM_RUNS,
          endOnFailure: !process.env.BILLING_PROPERTY_SHRINK,
          ...(SEED ? { seed: Number(SEED) } : {}),
        },
      );
      // About 1.5 s a run on PGlite; a long run (BILLING_PROPERTY_RUNS=1000) gets the time it needs.
    },
    Math.max(120_000, NUM_RUNS * 10_000),
  );
});

/** Counterexamples the property found, shrunk to their minimal sequence; both failed before the fix. */
describe('billing integrity: counterexamples found by the property', () => {
  const select = (user: TestUser, tier: TierKey, cadence?: Cadence) =>
    invoke(routes.selectPlan, { ...as(user), body: { tier, ...(cadence ? { cadence } : {}), ...urls } });

  it('tier1, tier5, tier1 at one instant (no card): the last tier1 is billed anew, not given its earlier voided fee back', async () => {
    testClock.freeze();
    const owner = await createUser();
    for (const tier of ['tier1', 'tier5', 'tier1'] as const) {
      const result = await select(owner, tier);
      if (result.status !== 200) throw new Error(`precondition: select ${tier} answered ${result.status}`);
    }
    // The charge key once repeated the first selection's (same instant, tier and cadence), so
    // recordCharge found the voided row and charged nothing: tier1 for free.
    const current = await invoke(routes.getCurrentPlan, as(owner));
    expect(current.body.data.plan.baseFeeStatus).toBe('open');
  });

  it('unpaid tier1, 9,901 cents granted, tier2 a minute later: the credits drawn are spread over the lines, none paid beyond its amount', async () => {
    testClock.freeze();
    const owner = await createUser();
    if ((await select(owner, 'tier1')).status !== 200) throw new Error('precondition: select tier1');
    await grantCredits(owner.organizationId, 9_901, 'reason');
    testClock.advance(60);
    // The charge: tier2 fee 9,900 + used part of the unpaid tier1 fee (1 cent) = 9,901, all from credits.
    if ((await select(owner, 'tier2')).status !== 200) throw new Error('precondition: select tier2');
    expect((await verifyBilling(owner.organizationId)).differences).toEqual([]);
  });
});
