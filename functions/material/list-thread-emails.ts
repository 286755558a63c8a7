import { endpoint } from '../../lib/http/endpoint';
import { listThreadEmails } from '../../lib/material';
import { EmailPageEntity, ThreadEmailsQuery, ThreadPath } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /local-emails/{caseId}/threads/{threadId}/emails: filtered page with attachments and tags. */
export const handler = endpoint(
  routes.listThreadEmails,
  { path: ThreadPath, query: ThreadEmailsQuery, response: EmailPageEntity },
  ({ caseContext, actor, path, query }) =>
    listThreadEmails({ caseContext, userId: actor.user.id }, { ...query, threadId: path.threadId }),
);
