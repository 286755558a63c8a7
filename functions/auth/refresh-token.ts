import { refreshToken } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { RefreshTokenDto, RefreshTokenResponseEntity } from '../../schemas/auth/refresh-token';
import * as routes from '../routes';

/** POST /auth/refresh: a new access token with the same refresh token. */
export const handler = endpoint(
  routes.refreshToken,
  { body: RefreshTokenDto, response: RefreshTokenResponseEntity },
  ({ body }) => refreshToken(body),
);
