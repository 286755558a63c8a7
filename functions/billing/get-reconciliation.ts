import { getReconciliation } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { ReconciliationResponseEntity, StatementQuery } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** GET /billing/reconciliation: rows newest first grouped by case, subtotals over all rows. */
export const handler = endpoint(
  routes.getReconciliation,
  { query: StatementQuery, response: ReconciliationResponseEntity },
  ({ organization, query }) => getReconciliation({ organization }, query),
);
