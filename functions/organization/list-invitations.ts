import { endpoint } from '../../lib/http/endpoint';
import { listInvitations } from '../../lib/organizations';
import { InvitationPageEntity, InvitationsQuery } from '../../schemas/organization/members';
import * as routes from '../routes';

/** GET /organization/invitations: invitations of the caller's organizations, most recently updated first. */
export const handler = endpoint(
  routes.listInvitations,
  { query: InvitationsQuery, response: InvitationPageEntity },
  ({ query, actor }) => listInvitations({ actor }, query),
);
