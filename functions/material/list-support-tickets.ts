import { endpoint } from '../../lib/http/endpoint';
import { profileSupportTickets } from '../../lib/material/chat';
import { ChatProfilePath, SupportTicketPageEntity, SupportTicketsQuery } from '../../schemas/material/material';
import { routes } from '../routes';

/** GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets */
export const handler = endpoint(
  routes.listSupportTickets,
  { path: ChatProfilePath, query: SupportTicketsQuery, response: SupportTicketPageEntity },
  ({ actor, path, query }) => profileSupportTickets(path.caseId, path.chatPlatformId, actor.user.id, query),
);
