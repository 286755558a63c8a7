import { listCases } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CasePageEntity, ListCasesQuery } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** GET /cases (extension): the cases of the header's organization the caller has access to. */
export const handler = endpoint(
  routes.listCases,
  { query: ListCasesQuery, response: CasePageEntity },
  ({ actor, organization, query }) => listCases({ actor, organization }, query),
);
