import { generateToken } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { GenerateTokenBody, GenerateTokenResponseEntity } from '../../schemas/auth/tokens';
import * as routes from '../routes';

/** POST /auth/generate-token: a scoped automation token, or a legacy full-access token without scopes. */
export const handler = endpoint(
  routes.generateToken,
  { body: GenerateTokenBody, response: GenerateTokenResponseEntity },
  ({ body, actor, ip, userAgent }) => generateToken({ actor, client: { ip, userAgent } }, body),
);
