import { endpoint } from '../../lib/http/endpoint';
import { removeOrganizationUser } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { MemberPath } from '../../schemas/organization/members';
import * as routes from '../routes';

/** DELETE /organization/{orgId}/user/{userId}: removes the member (or the caller leaves), their invitations and case access; frees a seat. */
export const handler = endpoint(
  routes.removeOrganizationUser,
  { path: MemberPath, response: MessageEntity },
  ({ actor, organization, path }) => removeOrganizationUser({ actor, organization }, path),
);
