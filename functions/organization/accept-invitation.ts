import { endpoint } from '../../lib/http/endpoint';
import { acceptInvitation } from '../../lib/organizations';
import {
  AcceptInvitationResponseEntity,
  AcceptOrganizationInvitationRequestDto,
} from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** POST /organization/{orgId}/invitation/accept (no auth): organization details plus `login`. */
export const handler = endpoint(
  routes.acceptInvitation,
  { path: OrganizationIdPath, body: AcceptOrganizationInvitationRequestDto, response: AcceptInvitationResponseEntity },
  ({ path, body, ip, userAgent }) => acceptInvitation({ client: { ip, userAgent } }, { ...path, ...body }),
);
