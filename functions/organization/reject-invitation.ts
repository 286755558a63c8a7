import { endpoint } from '../../lib/http/endpoint';
import { rejectInvitation } from '../../lib/organizations';
import { RejectOrganizationInvitationRequestDto } from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** POST /organization/{orgId}/invitation/reject (internal, no auth): 200 without `data`; the organization is told. */
export const handler = endpoint(
  routes.rejectInvitation,
  { path: OrganizationIdPath, body: RejectOrganizationInvitationRequestDto },
  ({ path, body }) => rejectInvitation({ ...path, ...body }),
);
