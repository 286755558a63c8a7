import { endpoint } from '../../lib/http/endpoint';
import { updateOrganizationUsers } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { UpdateOrganizationUsersDto } from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** PATCH /organization/{orgId}/user: roles, names and emails of members (names and emails of members ranked below the caller only); all or nothing. */
export const handler = endpoint(
  routes.updateOrganizationUsers,
  { path: OrganizationIdPath, body: UpdateOrganizationUsersDto, response: MessageEntity },
  ({ actor, organization, body }) => updateOrganizationUsers({ actor, organization }, body),
);
