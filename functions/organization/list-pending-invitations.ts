import { endpoint } from '../../lib/http/endpoint';
import { listPendingInvitations } from '../../lib/organizations';
import { InvitationPageEntity, PendingInvitationsQuery } from '../../schemas/organization/members';
import * as routes from '../routes';

/** GET /organization/pending-invitations (internal): the caller's own pending invitations. */
export const handler = endpoint(
  routes.listPendingInvitations,
  { query: PendingInvitationsQuery, response: InvitationPageEntity },
  ({ query, actor }) => listPendingInvitations({ actor }, query),
);
