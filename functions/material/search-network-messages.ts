import { endpoint } from '../../lib/http/endpoint';
import { searchMessages } from '../../lib/material/network';
import { CasePath } from '../../schemas/cases/cases';
import { ProfessionalNetworkMessagePageEntity, SearchMessagesQuery } from '../../schemas/material/material';
import { routes } from '../routes';

/** GET /professional-network/{caseId}/search-messages: full-text search, newest first. */
export const handler = endpoint(
  routes.searchNetworkMessages,
  { path: CasePath, query: SearchMessagesQuery, response: ProfessionalNetworkMessagePageEntity },
  ({ actor, path, query }) => searchMessages(path.caseId, actor.user.id, query),
);
