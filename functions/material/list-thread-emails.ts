import { endpoint } from '../../lib/http/endpoint';
import { threadEmails } from '../../lib/material/emails';
import { EmailPageEntity, ThreadEmailsQuery, ThreadPath } from '../../schemas/material/material';
import { routes } from '../routes';

/** GET /local-emails/{caseId}/threads/{threadId}/emails: filtered page with attachments and tags. */
export const handler = endpoint(
  routes.listThreadEmails,
  { path: ThreadPath, query: ThreadEmailsQuery, response: EmailPageEntity },
  ({ actor, path, query }) => threadEmails(path.caseId, path.threadId, actor.user.id, query),
);
