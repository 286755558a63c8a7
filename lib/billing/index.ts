/** The billing domain's route functions, one file each (use cases named after them). */
export { createBillingReport } from './report';
export { createBillingSetupSession } from './create-billing-setup-session';
export { getCredits } from './get-credits';
export { getCurrentPlan } from './get-current-plan';
export { listBillingHistory } from './history';
export { listPlans } from './list-plans';
export { selectPlan } from './select-plan';
export { getCaseStatement, getReconciliation } from './statements';
export { stripeWebhook } from './webhooks';
export { upgradeCaseToPro } from './upgrade-case-to-pro';
