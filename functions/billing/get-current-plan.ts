import { getCurrentPlan } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { CurrentPlanResponseEntity } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** GET /billing/plan/current: plan (null when not on case billing), usage and delinquency. */
export const handler = endpoint(routes.getCurrentPlan, { response: CurrentPlanResponseEntity }, ({ organization }) =>
  getCurrentPlan({ organization }),
);
