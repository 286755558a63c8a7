import { createBillingReport } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { BillingReportAnswer, BillingReportQueryDto } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** POST /billing/report (internal): JSON report or a stored PDF with a time-limited link. */
export const handler = endpoint(
  routes.createBillingReport,
  { body: BillingReportQueryDto, response: BillingReportAnswer },
  ({ organization, actor, body }) => createBillingReport({ organization, actor }, body),
);
