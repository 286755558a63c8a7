import { endpoint } from '../../lib/http/endpoint';
import { resendVerificationEmail } from '../../lib/users';
import { MessageEntity } from '../../schemas/common/fields';
import * as routes from '../routes';

/** POST /user/resend-verification-email (internal): 3 per minute; 400 when already verified. */
export const handler = endpoint(routes.resendVerificationEmail, { response: MessageEntity }, ({ actor }) =>
  resendVerificationEmail({ actor }),
);
