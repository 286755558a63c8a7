import { selectPlan } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { SelectPlanDto, SelectPlanResponseEntity } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** POST /billing/plan: self-serve tier in pay-as-you-go mode; net proration on a change. */
export const handler = endpoint(
  routes.selectPlan,
  { body: SelectPlanDto, response: SelectPlanResponseEntity },
  ({ organization, actor, body }) => selectPlan({ organization, actor }, body),
);
