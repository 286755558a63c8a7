import { listBillingHistory } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { BillingHistoryQuery, BillingHistoryResponseEntity } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** GET /billing/history (internal): audit entries newest first. */
export const handler = endpoint(
  routes.listBillingHistory,
  { query: BillingHistoryQuery, response: BillingHistoryResponseEntity },
  ({ organization, query }) => listBillingHistory({ organization }, query),
);
