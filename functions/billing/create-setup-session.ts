import { createBillingSetupSession } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { BillingSetupSessionEntity, CreateBillingSetupSessionDto } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** POST /billing/setup-session: checkout in setup mode; 409 without a processor customer. */
export const handler = endpoint(
  routes.createBillingSetupSession,
  { body: CreateBillingSetupSessionDto, response: BillingSetupSessionEntity },
  ({ organization, body }) => createBillingSetupSession({ organization }, body),
);
