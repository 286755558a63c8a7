import { endpoint } from '../../lib/http/endpoint';
import { listEmailThreads } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { EmailThreadPageEntity, MaterialPagingQuery } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /local-emails/{caseId}/threads (extension): threads, latest activity first. */
export const handler = endpoint(
  routes.listEmailThreads,
  { path: CasePath, query: MaterialPagingQuery, response: EmailThreadPageEntity },
  ({ caseContext, query }) => listEmailThreads({ caseContext }, query),
);
