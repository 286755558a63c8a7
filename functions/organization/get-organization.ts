import { endpoint } from '../../lib/http/endpoint';
import { getOrganization } from '../../lib/organizations';
import { OrganizationDetailsResponseEntity, OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/{orgId}: details (activePlan not loaded); 403 without a role. */
export const handler = endpoint(
  routes.getOrganization,
  { path: OrganizationIdPath, response: OrganizationDetailsResponseEntity },
  ({ organization }) => getOrganization({ organization }),
);
