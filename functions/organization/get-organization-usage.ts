import { endpoint } from '../../lib/http/endpoint';
import { getOrganizationUsage } from '../../lib/organizations';
import {
  OrganizationIdPath,
  OrganizationPlanUsageEntity,
  UsagesStatQuery,
} from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/{orgId}/usages-stat (internal): plan usage and whether the device is new. */
export const handler = endpoint(
  routes.getOrganizationUsage,
  { path: OrganizationIdPath, query: UsagesStatQuery, response: OrganizationPlanUsageEntity },
  ({ organization, query }) => getOrganizationUsage({ organization }, query),
);
