import { getCaseStatement } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { CaseStatementResponseEntity, StatementQuery } from '../../schemas/billing/billing';
import { CasePath } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** GET /cases/{caseId}/billing/statement: rows newest first; totals over all rows. */
export const handler = endpoint(
  routes.getCaseStatement,
  { path: CasePath, query: StatementQuery, response: CaseStatementResponseEntity },
  ({ organization, caseContext, query }) => getCaseStatement({ organization, caseContext }, query),
);
