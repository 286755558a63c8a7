import { endpoint } from '../../lib/http/endpoint';
import { listSupportTickets } from '../../lib/material';
import { ChatProfilePath, SupportTicketPageEntity, SupportTicketsQuery } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets */
export const handler = endpoint(
  routes.listSupportTickets,
  { path: ChatProfilePath, query: SupportTicketsQuery, response: SupportTicketPageEntity },
  ({ caseContext, path, query }) =>
    listSupportTickets({ caseContext }, { ...query, chatPlatformId: path.chatPlatformId }),
);
