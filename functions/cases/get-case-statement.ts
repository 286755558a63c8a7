import { caseStatement } from '../../lib/billing/statements';
import { endpoint } from '../../lib/http/endpoint';
import { CaseIdPath, CaseStatementResponseEntity, StatementQuery } from '../../schemas/billing/billing';
import { routes } from '../routes';

/** GET /cases/{caseId}/billing/statement: rows newest first; totals over all rows. */
export const handler = endpoint(
  routes.getCaseStatement,
  { path: CaseIdPath, query: StatementQuery, response: CaseStatementResponseEntity },
  ({ organization, actor, path, query }) => caseStatement(organization.id, actor.user.id, path.caseId, query),
);
