import { billingReport } from '../../lib/billing/report';
import { endpoint } from '../../lib/http/endpoint';
import { BillingReportAnswer, BillingReportQueryDto } from '../../schemas/billing/billing';
import { routes } from '../routes';

/** POST /billing/report (internal): JSON report or a stored PDF with a time-limited link. */
export const handler = endpoint(
  routes.createBillingReport,
  { body: BillingReportQueryDto, response: BillingReportAnswer },
  ({ organization, actor, body }) => billingReport(organization.id, actor.user.id, body),
);
