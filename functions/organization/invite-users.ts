import { endpoint } from '../../lib/http/endpoint';
import { inviteUsers } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { InviteOrganizationUsersDto } from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** POST /organization/{orgId}/invite: members skipped, pending re-sent; 403 over the seat limit. */
export const handler = endpoint(
  routes.inviteUsers,
  { path: OrganizationIdPath, body: InviteOrganizationUsersDto, response: MessageEntity },
  ({ organization, actor, body }) => inviteUsers({ organization, actor }, body),
);
