import { DomainError, type Finding, ServiceUnavailableError } from '../errors';

/** Errors of billing, plans, credits, reports and payment webhooks: each message written once. */

export class CaseBillingOffError extends DomainError {
  constructor() {
    super('FEATURE_DISABLED', 'Case billing is not enabled for this organization: select a plan first');
  }
}

export class CaseAlreadyProError extends DomainError {
  constructor() {
    super('CONFLICT', 'The case is already Pro');
  }
}

export class DelinquentError extends DomainError {
  constructor() {
    super('DELINQUENT', 'A base fee is unpaid for more than 7 days: save a card to settle it before new charges');
  }
}

export class DelinquentPlanChangeError extends DomainError {
  constructor() {
    super(
      'DELINQUENT',
      'A base fee is unpaid for more than 7 days: save a card to settle it; until then only a move to a cheaper plan is possible',
    );
  }
}

export class CreditsOffError extends DomainError {
  constructor() {
    super('FEATURE_DISABLED', 'Credits are turned off');
  }
}

export class SelfServePlansOffError extends DomainError {
  constructor() {
    super('FEATURE_DISABLED', 'Self-serve plan selection is not available');
  }
}

/** 409: the organization uses more than the tier allows; each finding names the allowance over its cap. */
export class PlanBelowUsageError extends DomainError {
  constructor(tier: { name: string; key: string }, over: Finding[]) {
    super(
      'PLAN_BELOW_USAGE',
      `The organization uses more than ${tier.name} (${tier.key}) allows: ${over.map((o) => o.path).join(', ')}`,
      { findings: over },
    );
  }
}

export class NoProcessorCustomerError extends DomainError {
  constructor() {
    super('CONFLICT', 'The billing profile has no payment-processor customer yet; try again shortly');
  }
}

export class BillingReportsOffError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Billing reports are not available');
  }
}

export class ReportTooLargeError extends DomainError {
  constructor(rowCount: number, maxRows: number) {
    super(
      'REPORT_TOO_LARGE',
      `The report would hold ${rowCount} rows; at most ${maxRows} are allowed: narrow the window or the cases`,
    );
  }
}

export class WebhooksNotConfiguredError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Stripe webhooks are not configured');
  }
}

export class MissingSignatureError extends DomainError {
  constructor() {
    super('INVALID_SIGNATURE', 'Missing body or Stripe-Signature header');
  }
}

export class InvalidSignatureError extends DomainError {
  constructor() {
    super('INVALID_SIGNATURE', 'The webhook signature does not verify');
  }
}

/** The processor could not be reached or failed on its side: nothing was changed, try again shortly. */
export class ProcessorUnavailableError extends ServiceUnavailableError {
  constructor(cause: unknown) {
    super('The payment processor is briefly unavailable; nothing was changed, try again shortly', 30);
    this.cause = cause;
  }
}

/**
 * Deployed without a Stripe key (the stack creates the secret empty): nothing was changed. Retry
 * after the time a warm function takes to see keys put into the secret (SECRET_MAX_AGE_SECONDS).
 */
export class PaymentsNotConfiguredError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super('PAYMENTS_NOT_CONFIGURED', 'Payments are not configured yet; nothing was changed, try again later', {
      retryAfterSeconds,
    });
  }
}

/** 403: the feature is not in the plan enforced; names it and the cheapest tier that includes it. */
export class FeatureNotInPlanError extends DomainError {
  constructor(feature: string, lowestTier: { key: string; name: string } | null) {
    super(
      'FEATURE_NOT_IN_PLAN',
      lowestTier
        ? `The plan does not include ${feature}: it comes with ${lowestTier.name} (${lowestTier.key}) and above`
        : `The plan does not include ${feature}`,
      {
        findings: [
          { path: 'feature', message: feature },
          ...(lowestTier ? [{ path: 'lowestTier', message: lowestTier.key }] : []),
        ],
      },
    );
  }
}
