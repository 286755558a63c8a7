import { listAuditEvents } from '../../lib/audit';
import { endpoint } from '../../lib/http/endpoint';
import { AuditEventPageEntity, AuditEventsQuery } from '../../schemas/audit/audit-events';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/{orgId}/audit-events: the organization's audit trail, newest first, 50 per page by default. */
export const handler = endpoint(
  routes.listAuditEvents,
  { path: OrganizationIdPath, query: AuditEventsQuery, response: AuditEventPageEntity },
  ({ organization, actor, query }) => listAuditEvents({ organization, userId: actor.user.id }, query),
);
