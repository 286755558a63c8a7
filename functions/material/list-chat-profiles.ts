import { endpoint } from '../../lib/http/endpoint';
import { listProfiles } from '../../lib/material/network';
import { CasePath } from '../../schemas/cases/cases';
import { MaterialPagingQuery, ProfilePageEntity } from '../../schemas/material/material';
import { routes } from '../routes';

/** GET /chat-platform/{caseId}/profiles (extension) */
export const handler = endpoint(
  routes.listChatProfiles,
  { path: CasePath, query: MaterialPagingQuery, response: ProfilePageEntity },
  ({ actor, path, query }) => listProfiles(path.caseId, actor.user.id, 'chat_platform', query),
);
