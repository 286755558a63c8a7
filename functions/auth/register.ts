import { endpoint } from '../../lib/http/endpoint';
import { register } from '../../lib/organizations';
import { RegisterEmailDto, RegisterResponseEntity } from '../../schemas/auth/register';
import * as routes from '../routes';

/** POST /auth/register: user, organization, invitations, verification email, and a session. */
export const handler = endpoint(
  routes.register,
  { body: RegisterEmailDto, response: RegisterResponseEntity },
  ({ body, ip, userAgent }) => register({ client: { ip, userAgent } }, body),
);
