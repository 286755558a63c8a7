import { endpoint } from '../../lib/http/endpoint';
import { listNetworkProfiles } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { MaterialPagingQuery, ProfilePageEntity } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /professional-network/{caseId}/profiles (extension) */
export const handler = endpoint(
  routes.listNetworkProfiles,
  { path: CasePath, query: MaterialPagingQuery, response: ProfilePageEntity },
  ({ caseContext, query }) => listNetworkProfiles({ caseContext }, query),
);
