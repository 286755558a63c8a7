import { getCredits } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { CreditBalanceEntity, CreditsQuery } from '../../schemas/billing/billing';
import * as routes from '../routes';

/** GET /billing/credits: balance and ledger newest first; 403 while credits are off. */
export const handler = endpoint(
  routes.getCredits,
  { query: CreditsQuery, response: CreditBalanceEntity },
  ({ organization, query }) => getCredits({ organization }, query),
);
