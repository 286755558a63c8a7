import * as z from 'zod/mini';
import { Email, Password } from '../common/fields';

export const SendForgotPasswordLinkDto = z
  .object({ email: Email })
  .register(z.globalRegistry, { id: 'SendForgotPasswordLinkDto' });

export const ResetPasswordDto = z
  .object({ token: z.string().check(z.minLength(1), z.maxLength(512)), email: Email, password: Password })
  .register(z.globalRegistry, { id: 'ResetPasswordDto' });
