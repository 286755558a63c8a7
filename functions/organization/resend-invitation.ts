import { endpoint } from '../../lib/http/endpoint';
import { resendInvitation } from '../../lib/organizations';
import { MessageEntity } from '../../schemas/common/fields';
import { InvitationPath } from '../../schemas/organization/members';
import * as routes from '../routes';

/** POST /organization/{orgId}/invitation/{invitationId}/resend: new one-month token; 400 when accepted. */
export const handler = endpoint(
  routes.resendInvitation,
  { path: InvitationPath, response: MessageEntity },
  ({ organization, actor, path }) => resendInvitation({ organization, actor }, path),
);
