import * as z from 'zod/mini';
import { Email } from '../common/fields';
import { UserEntity } from '../user/user-entity';

export const LoginEmailDto = z
  .object({ email: Email, password: z.string().check(z.minLength(1), z.maxLength(128)) })
  .register(z.globalRegistry, { id: 'LoginEmailDto' });

export const LoginResponseEntity = z
  .object({ accessToken: z.string(), refreshToken: z.string(), userProfile: UserEntity })
  .register(z.globalRegistry, { id: 'LoginResponseEntity' });

export type LoginEmailDto = z.infer<typeof LoginEmailDto>;
