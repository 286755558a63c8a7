import { endpoint } from '../../lib/http/endpoint';
import { createOrganization } from '../../lib/organizations';
import { CreateOrganizationDto, OrganizationDetailsResponseEntity } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** POST /organization: the caller becomes owner; free plan, processor customer, invitations. */
export const handler = endpoint(
  routes.createOrganization,
  { body: CreateOrganizationDto, response: OrganizationDetailsResponseEntity },
  ({ body, actor }) => createOrganization({ actor }, body),
);
