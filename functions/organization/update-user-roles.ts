import { endpoint } from '../../lib/http/endpoint';
import { updateUserRoles } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { UpdateOrganizationUserAccessDto } from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** PATCH /organization/{orgId}/update-user-role (internal): non-members are skipped. */
export const handler = endpoint(
  routes.updateUserRoles,
  { path: OrganizationIdPath, body: UpdateOrganizationUserAccessDto, response: MessageEntity },
  ({ organization, body }) => updateUserRoles({ organization }, body),
);
