import * as z from 'zod/mini';

export const RefreshTokenDto = z
  .object({ refreshToken: z.string().check(z.minLength(1), z.maxLength(512)) })
  .register(z.globalRegistry, { id: 'RefreshTokenDto' });

export const RefreshTokenResponseEntity = z
  .object({ accessToken: z.string(), refreshToken: z.string() })
  .register(z.globalRegistry, { id: 'RefreshTokenResponseEntity' });
