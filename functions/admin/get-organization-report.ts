import { endpoint } from '../../lib/http/endpoint';
import { getOrganizationReport } from '../../lib/reports';
import { OrganizationActivityReportPageEntity, OrgReportQuery } from '../../schemas/material/material';
import * as routes from '../routes';

/** GET /admin/report/org-report (internal, super admin only) */
export const handler = endpoint(
  routes.getOrganizationReport,
  { query: OrgReportQuery, response: OrganizationActivityReportPageEntity },
  ({ query }) => getOrganizationReport(query),
);
