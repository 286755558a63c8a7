import { login } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { LoginEmailDto, LoginResponseEntity } from '../../schemas/auth/login';
import * as routes from '../routes';

/** POST /auth/login: creates a session; 401 for wrong credentials, inactive or extraction-only users. */
export const handler = endpoint(
  routes.login,
  { body: LoginEmailDto, response: LoginResponseEntity },
  ({ body, ip, userAgent }) => login({ client: { ip, userAgent } }, body),
);
