import { endpoint } from '../../lib/http/endpoint';
import { listThreads } from '../../lib/material/emails';
import { CasePath } from '../../schemas/cases/cases';
import { EmailThreadPageEntity, MaterialPagingQuery } from '../../schemas/material/material';
import { routes } from '../routes';

/** GET /local-emails/{caseId}/threads (extension): threads, latest activity first. */
export const handler = endpoint(
  routes.listEmailThreads,
  { path: CasePath, query: MaterialPagingQuery, response: EmailThreadPageEntity },
  ({ actor, path, query }) => listThreads(path.caseId, actor.user.id, query),
);
