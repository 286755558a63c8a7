import { endpoint } from '../../lib/http/endpoint';
import { listMembers } from '../../lib/organizations';
import { MemberPageEntity, MembersQuery } from '../../schemas/organization/members';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/{orgId}/members: 10 per page by default; `data` null when nothing matches. */
export const handler = endpoint(
  routes.listMembers,
  { path: OrganizationIdPath, query: MembersQuery, response: MemberPageEntity },
  ({ organization, query }) => listMembers({ organization }, query),
);
