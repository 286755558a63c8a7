import { endpoint } from '../../lib/http/endpoint';
import { updateOrganization } from '../../lib/organizations';
import {
  OrganizationDetailsResponseEntity,
  OrganizationIdPath,
  UpdateOrganizationDto,
} from '../../schemas/organization/organization';
import * as routes from '../routes';

/** PATCH /organization/{orgId}: 201 with the updated details; renaming regenerates the slug. */
export const handler = endpoint(
  routes.updateOrganization,
  { path: OrganizationIdPath, body: UpdateOrganizationDto, response: OrganizationDetailsResponseEntity },
  ({ actor, organization, body }) => updateOrganization({ actor, organization }, body),
);
