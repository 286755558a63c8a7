import * as z from 'zod/mini';
import { BILLING_HISTORY_CATEGORIES } from '../../lib/billing/history-categories';
import { BASE_FEE_STATUSES } from '../../lib/billing/summary';
import { CADENCES, ENFORCED_PLAN_BASES, TIER_KEYS } from '../../lib/billing/tiers';
import { DateTime, Id, IdText } from '../common/fields';
import { QueryInt } from '../common/paging';

/** limit (default 50, at most 200) and skip, for statements, reconciliation, history and credits. */
export const LedgerPagingQuery = { limit: z.optional(QueryInt(1, 200)), skip: z.optional(QueryInt(0, 100_000_000)) };

/** Where the processor's checkout page sends the browser back: http(s) only (never javascript:, data:...). */
const ReturnUrl = z.url({ protocol: /^https?$/ }).check(z.maxLength(2048));

export const CreateBillingSetupSessionDto = z
  .object({ successUrl: ReturnUrl, cancelUrl: ReturnUrl })
  .register(z.globalRegistry, { id: 'CreateBillingSetupSessionDto' });

export const BillingSetupSessionEntity = z
  .object({ url: z.string() })
  .register(z.globalRegistry, { id: 'BillingSetupSessionEntity' });

export const SelectPlanDto = z
  .object({
    tier: z.enum(TIER_KEYS),
    cadence: z.optional(z.enum(CADENCES)),
    successUrl: z.optional(ReturnUrl),
    cancelUrl: z.optional(ReturnUrl),
  })
  .register(z.globalRegistry, { id: 'SelectPlanDto' });

export const SelectPlanResponseEntity = z
  .object({
    tier: z.enum(TIER_KEYS),
    cadence: z.enum(CADENCES),
    billingMode: z.literal('pay_as_you_go'),
    prorationCents: z.number(),
    paymentRequired: z.boolean(),
    setupSessionUrl: z.nullable(z.string()),
  })
  .register(z.globalRegistry, { id: 'SelectPlanResponseEntity' });

export const CaseProUpgradeResponseEntity = z
  .object({ caseId: Id, status: z.literal('processing') })
  .register(z.globalRegistry, { id: 'CaseProUpgradeResponseEntity' });

export const BillingRowEntity = z
  .object({
    id: Id,
    date: DateTime,
    skuKey: z.string(),
    description: z.string(),
    quantity: z.number(),
    unitAmountCents: z.number(),
    amountCents: z.number(),
    status: z.string(),
    informational: z.boolean(),
    creditsAppliedCents: z.number(),
    caseId: z.nullable(Id),
    chargeScope: z.enum(['case', 'platform']),
    invoiceId: z.optional(z.string()),
    processorInvoiceId: z.nullable(z.string()),
    hostedInvoiceUrl: z.nullable(z.string()),
  })
  .register(z.globalRegistry, { id: 'BillingRowEntity' });

export const StatementQuery = z.object(LedgerPagingQuery);

export const CaseStatementResponseEntity = z
  .object({
    caseId: Id,
    caseName: z.string(),
    isPro: z.boolean(),
    /** Why the case is Pro and until when, and how its Pro changed, newest first (at most 20). */
    pro: z.object({
      /** paid: a Pro upgrade paid for it, kept for good; plan: a Pro-including plan in force. */
      source: z.nullable(z.enum(['paid', 'plan'])),
      /** Pro through a plan whose fee is unpaid ends then, unless it is paid. */
      until: z.nullable(DateTime),
      changes: z.array(
        z.object({
          at: DateTime,
          change: z.enum(['upgrade_requested', 'ended', 'restored']),
          /** Why Pro ended or came back: plan_selected, base_fee_paid, base_fee_failed, base_fee_unpaid, plan_without_pro. */
          cause: z.nullable(z.string()),
          /** For an upgrade: plan (included) or the charge. */
          paidWith: z.nullable(z.string()),
        }),
      ),
    }),
    rows: z.array(BillingRowEntity),
    total: z.number(),
    limit: z.number(),
    skip: z.number(),
    totalChargedCents: z.number(),
    totalInformationalCents: z.number(),
  })
  .register(z.globalRegistry, { id: 'CaseStatementResponseEntity' });

export const ReconciliationResponseEntity = z
  .object({
    groups: z.array(
      z.object({
        caseId: z.string(),
        caseName: z.nullable(z.string()),
        chargeScope: z.enum(['case', 'platform']),
        subtotalChargedCents: z.number(),
        subtotalInformationalCents: z.number(),
        rows: z.array(BillingRowEntity),
      }),
    ),
    total: z.number(),
    limit: z.number(),
    skip: z.number(),
    totalChargedCents: z.number(),
    totalInformationalCents: z.number(),
  })
  .register(z.globalRegistry, { id: 'ReconciliationResponseEntity' });

export const BillingHistoryCategoryEnum = z.enum(BILLING_HISTORY_CATEGORIES);

export const BillingHistoryQuery = z.object({
  ...LedgerPagingQuery,
  category: z.optional(BillingHistoryCategoryEnum),
  caseId: z.optional(IdText),
});

export const BillingHistoryResponseEntity = z
  .array(
    z.object({
      id: Id,
      category: BillingHistoryCategoryEnum,
      caseId: z.nullable(Id),
      description: z.string(),
      reason: z.nullable(z.string()),
      createdBy: z.optional(z.nullable(z.object({ id: Id, name: z.string(), email: z.string() }))),
      createdAt: DateTime,
    }),
  )
  .register(z.globalRegistry, { id: 'BillingHistoryResponseEntity' });

export const PlanTierEntity = z
  .object({
    /** A tier, or `free`: the free plan, listed for its limits and not selectable. */
    key: z.enum(['free', ...TIER_KEYS]),
    name: z.string(),
    monthlyPriceCents: z.nullable(z.number()),
    annualPriceCents: z.number(),
    seatCap: z.number(),
    storageCapBytes: z.number(),
    deviceCap: z.number(),
    casesPerMonth: z.nullable(z.number()),
    features: z.array(z.string()),
    cadences: z.array(z.enum(CADENCES)),
    annualOnly: z.boolean(),
    includesPro: z.boolean(),
    /** Whether POST /billing/plan takes it: every tier; not the free plan. */
    selectable: z.boolean(),
  })
  .register(z.globalRegistry, { id: 'PlanTierEntity' });

export const PlanTierList = z.array(PlanTierEntity);

/** The plan whose caps are enforced and why: benefits follow payment (lib/billing/enforced-plan.ts). */
export const EnforcedPlanEntity = z
  .object({
    /** The tier whose caps apply; null for the free plan or a legacy plan. */
    tier: z.nullable(z.enum(TIER_KEYS)),
    /** selected (paid); awaiting_payment (unpaid, within its days to pay); last_paid or free (delinquent); plan (not on a tier). */
    basis: z.enum(ENFORCED_PLAN_BASES),
    /** Whether cases are Pro through the plan. */
    includesPro: z.boolean(),
    /** Until when an unpaid selection's caps hold. */
    payBy: z.nullable(DateTime),
  })
  .register(z.globalRegistry, { id: 'EnforcedPlanEntity' });

export const CurrentPlanResponseEntity = z
  .object({
    plan: z.nullable(
      z.object({
        tier: z.enum(TIER_KEYS),
        tierName: z.string(),
        cadence: z.nullable(z.enum(CADENCES)),
        billingMode: z.string(),
        basePriceCents: z.number(),
        periodStart: z.nullable(DateTime),
        periodEnd: z.nullable(DateTime),
        paymentMethod: z.nullable(z.object({ type: z.literal('card'), last4: z.nullable(z.string()) })),
        /** The base fee of the current period: paid; open (no card yet, or collection pending); failed (declined); none (nothing owed). */
        baseFeeStatus: z.enum(BASE_FEE_STATUSES),
      }),
    ),
    enforcedPlan: EnforcedPlanEntity,
    usage: z.object({
      seats: z.object({ used: z.number(), cap: z.number() }),
      devices: z.object({ used: z.number(), cap: z.number() }),
      storage: z.object({ usedBytes: z.number(), reservedBytes: z.number(), capBytes: z.number() }),
      cases: z.object({ createdThisMonth: z.number(), cap: z.nullable(z.number()) }),
    }),
    delinquent: z.boolean(),
  })
  .register(z.globalRegistry, { id: 'CurrentPlanResponseEntity' });

export const CreditsQuery = z.object(LedgerPagingQuery);

export const CreditBalanceEntity = z
  .object({
    balanceCents: z.number(),
    currency: z.string(),
    effectiveDeductPercentage: z.number(),
    ledger: z.array(
      z.object({
        id: Id,
        amountCents: z.number(),
        balanceAfterCents: z.number(),
        kind: z.string(),
        description: z.string(),
        billingRowId: z.nullable(Id),
        createdAt: DateTime,
      }),
    ),
    total: z.number(),
    limit: z.number(),
    skip: z.number(),
  })
  .register(z.globalRegistry, { id: 'CreditBalanceEntity' });

export const BillingReportQueryDto = z
  .object({
    caseIds: z.optional(z.array(IdText).check(z.maxLength(500))),
    startDate: z.optional(DateTime),
    endDate: z.optional(DateTime),
    format: z.enum(['json', 'pdf']),
  })
  .register(z.globalRegistry, { id: 'BillingReportQueryDto' });

const ReportRow = z.object({
  date: DateTime,
  skuKey: z.string(),
  description: z.string(),
  quantity: z.number(),
  unitAmountCents: z.number(),
  amountCents: z.number(),
  status: z.string(),
  invoiceId: z.optional(z.string()),
});

export const BillingReportResponseEntity = z
  .object({
    organizations: z.array(
      z.object({
        organizationId: Id,
        organizationName: z.string(),
        tier: z.string(),
        billingMode: z.string(),
        onCaseBilling: z.boolean(),
        window: z.object({ startDate: DateTime, endDate: DateTime }),
        cases: z.array(
          z.object({
            caseId: z.string(),
            caseName: z.string(),
            rows: z.array(ReportRow),
            subtotalChargedCents: z.number(),
            subtotalInformationalCents: z.number(),
          }),
        ),
        totalChargedCents: z.number(),
        totalInformationalCents: z.number(),
        totalNonChargeableCents: z.number(),
        totalFailedCents: z.number(),
        totalRefundedCents: z.number(),
      }),
    ),
    grandTotalChargedCents: z.number(),
  })
  .register(z.globalRegistry, { id: 'BillingReportResponseEntity' });

export const BillingReportFileResponseEntity = z
  .object({
    fileName: z.string(),
    contentType: z.literal('application/pdf'),
    sizeBytes: z.number(),
    storageKey: z.string(),
    rowCount: z.number(),
    downloadUrl: z.string(),
    expiresAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'BillingReportFileResponseEntity' });

export const BillingReportAnswer = z.union([BillingReportResponseEntity, BillingReportFileResponseEntity]);

export const StripeWebhookResponseEntity = z.object({ received: z.literal(true), duplicate: z.boolean() });
