import { listPlans } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { PlanTierList } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** GET /billing/plans: the self-serve tier catalog. */
export const handler = endpoint(routes.listPlans, { response: PlanTierList }, async () => listPlans());
