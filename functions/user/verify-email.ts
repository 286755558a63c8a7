import { endpoint } from '../../lib/http/endpoint';
import { verifyEmail } from '../../lib/users';
import { MessageEntity } from '../../schemas/common/fields';
import { VerifyEmailDto } from '../../schemas/user/update-user';
import * as routes from '../routes';

/** POST /user/verify-email: no auth; 404 unknown token, 400 expired. */
export const handler = endpoint(routes.verifyEmail, { body: VerifyEmailDto, response: MessageEntity }, ({ body }) =>
  verifyEmail(body),
);
