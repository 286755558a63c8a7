import { revokeToken } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { TokenIdPath } from '../../schemas/auth/tokens';
import * as routes from '../routes';

/** DELETE /auth/tokens/{id}: marks the automation token revoked; 204. */
export const handler = endpoint(routes.revokeToken, { path: TokenIdPath }, ({ path, actor }) =>
  revokeToken({ actor }, path),
);
