/** What a billing history entry is about: the column and the API read this list. */
export const BILLING_HISTORY_CATEGORIES = [
  'subscription',
  'invoicing',
  'payment_method',
  'case_billing',
  'admin',
] as const;

export type BillingHistoryCategory = (typeof BILLING_HISTORY_CATEGORIES)[number];
