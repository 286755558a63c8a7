import { endpoint } from '../../lib/http/endpoint';
import { getOrganizationBySlug } from '../../lib/organizations';
import { OrganizationDetailsResponseEntity, SlugPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/slug/{slug} (internal): 403 without a role and for an unknown slug. */
export const handler = endpoint(
  routes.getOrganizationBySlug,
  { path: SlugPath, response: OrganizationDetailsResponseEntity },
  ({ path, actor }) => getOrganizationBySlug({ actor }, path),
);
