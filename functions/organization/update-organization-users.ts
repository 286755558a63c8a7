import { endpoint } from '../../lib/http/endpoint';
import { updateOrganizationUsers } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { UpdateOrganizationUsersDto } from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import { routes } from '../routes';

/** PATCH /organization/{orgId}/user: roles, names and emails of members; all or nothing. */
export const handler = endpoint(
  routes.updateOrganizationUsers,
  { path: OrganizationIdPath, body: UpdateOrganizationUsersDto, response: MessageEntity },
  ({ organization, body }) => updateOrganizationUsers(organization, body),
);
