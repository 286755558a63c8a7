import { endpoint } from '../../lib/http/endpoint';
import { resetPassword } from '../../lib/auth';
import { ResetPasswordDto } from '../../schemas/auth/password-reset';
import { MessageWithSuccessEntity } from '../../schemas/common/fields';
import * as routes from '../routes';

/** POST /auth/reset-password: always 200; `isSuccess` false for an unknown or expired token. */
export const handler = endpoint(
  routes.resetPassword,
  { body: ResetPasswordDto, response: MessageWithSuccessEntity },
  ({ body }) => resetPassword(body),
);
