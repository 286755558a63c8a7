import { listTokens } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { AutomationTokenList } from '../../schemas/auth/tokens';
import * as routes from '../routes';

/** GET /auth/tokens: the caller's automation tokens, newest first, never their values. */
export const handler = endpoint(routes.listTokens, { response: AutomationTokenList }, ({ actor }) =>
  listTokens({ actor }),
);
