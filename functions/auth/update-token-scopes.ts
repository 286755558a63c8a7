import { updateTokenScopes } from '../../lib/auth/automation-tokens';
import { endpoint } from '../../lib/http/endpoint';
import { TokenIdPath, UpdateTokenScopesDto } from '../../schemas/auth/tokens';
import { routes } from '../routes';

/** PATCH /auth/tokens/{id}/scopes: replaces the scopes; an empty list disables the token. */
export const handler = endpoint(routes.updateTokenScopes, { path: TokenIdPath, body: UpdateTokenScopesDto }, ({ path, body, actor }) =>
  updateTokenScopes(actor, path.id, body.scopes),
);
