import { endpoint } from '../../lib/http/endpoint';
import { sendForgotPasswordLink } from '../../lib/users';
import { SendForgotPasswordLinkDto } from '../../schemas/auth/password-reset';
import { MessageWithSuccessEntity } from '../../schemas/common/fields';
import * as routes from '../routes';

/** POST /auth/send-forgot-password-link: always 200; `isSuccess` false for an unknown email. */
export const handler = endpoint(
  routes.sendForgotPasswordLink,
  { body: SendForgotPasswordLinkDto, response: MessageWithSuccessEntity },
  ({ body }) => sendForgotPasswordLink(body),
);
