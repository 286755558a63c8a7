import { endpoint } from '../../lib/http/endpoint';
import { searchNetworkMessages } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { ProfessionalNetworkMessagePageEntity, SearchMessagesQuery } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /professional-network/{caseId}/search-messages: full-text search, newest first. */
export const handler = endpoint(
  routes.searchNetworkMessages,
  { path: CasePath, query: SearchMessagesQuery, response: ProfessionalNetworkMessagePageEntity },
  ({ caseContext, actor, query }) => searchNetworkMessages({ caseContext, userId: actor.user.id }, query),
);
