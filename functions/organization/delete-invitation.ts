import { endpoint } from '../../lib/http/endpoint';
import { deleteInvitation } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { InvitationPath } from '../../schemas/organization/members';
import * as routes from '../routes';

/** DELETE /organization/{orgId}/invitation/{invitationId}: pending only; 404 unknown, 400 otherwise. */
export const handler = endpoint(
  routes.deleteInvitation,
  { path: InvitationPath, response: MessageEntity },
  ({ organization, path }) => deleteInvitation({ organization }, path),
);
