import { endpoint } from '../../lib/http/endpoint';
import { listChatProfiles } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { MaterialPagingQuery, ProfilePageEntity } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /chat-platform/{caseId}/profiles (extension) */
export const handler = endpoint(
  routes.listChatProfiles,
  { path: CasePath, query: MaterialPagingQuery, response: ProfilePageEntity },
  ({ caseContext, query }) => listChatProfiles({ caseContext }, query),
);
