import { updateTokenScopes } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { AutomationTokenListEntity, TokenIdPath, UpdateTokenScopesDto } from '../../schemas/auth/tokens';
import * as routes from '../routes';

/** PATCH /auth/tokens/{id}/scopes: replaces the scopes; an empty list disables the token. */
export const handler = endpoint(
  routes.updateTokenScopes,
  { path: TokenIdPath, body: UpdateTokenScopesDto, response: AutomationTokenListEntity },
  ({ path, body, actor }) => updateTokenScopes({ actor }, { ...path, ...body }),
);
