import { endpoint } from '../../lib/http/endpoint';
import { getCaseCustody } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { CaseCustodyAnswer, CaseCustodyQuery } from '../../schemas/material/custody';
import * as routes from '../routes';

/** GET /cases/{caseId}/custody (extension): the chain of custody as JSON, or a stored PDF with a time-limited link. */
export const handler = endpoint(
  routes.getCaseCustody,
  { path: CasePath, query: CaseCustodyQuery, response: CaseCustodyAnswer },
  ({ caseContext, query }) => getCaseCustody({ caseContext }, query),
);
