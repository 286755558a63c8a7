import { verifyAuditTrail } from '../../lib/audit';
import { endpoint } from '../../lib/http/endpoint';
import { AuditChainVerificationEntity } from '../../schemas/audit/audit-events';
import { OrganizationIdPath } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/{orgId}/audit-events/verify: checks the organization's hash chain since its checkpoint. */
export const handler = endpoint(
  routes.verifyAuditChain,
  { path: OrganizationIdPath, response: AuditChainVerificationEntity },
  ({ organization }) => verifyAuditTrail(organization.id),
);
