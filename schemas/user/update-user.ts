import * as z from 'zod/mini';
import { DisplayName, Email, Password } from '../common/fields';

/** Longest `onboardingStatus` and `userType`. */
export const FREE_TEXT_MAX_LENGTH = 100;
/** `onboardingStep` is stored in a Postgres integer column. */
const POSTGRES_INTEGER_MAX = 2_147_483_647;

const PhoneNumber = z.string().check(z.trim(), z.regex(/^\+?[0-9][0-9 ().-]{2,30}$/, 'Not a phone number'));

export const UpdateUserDto = z
  .object({
    name: z.optional(DisplayName),
    phoneNumbers: z.optional(z.array(PhoneNumber).check(z.maxLength(10))),
    // Free text: the contract lists no values, so the client apps own them.
    onboardingStatus: z.optional(z.string().check(z.maxLength(FREE_TEXT_MAX_LENGTH))),
    onboardingStep: z.optional(z.int().check(z.minimum(0), z.maximum(POSTGRES_INTEGER_MAX))),
    userType: z.optional(z.nullable(z.string().check(z.maxLength(FREE_TEXT_MAX_LENGTH)))),
  })
  .register(z.globalRegistry, { id: 'UpdateUserDto' });

export const ChangePasswordDto = z
  .object({ oldPassword: z.string().check(z.minLength(1), z.maxLength(128)), newPassword: Password })
  .register(z.globalRegistry, { id: 'ChangePasswordDto' });

export const VerifyEmailDto = z
  .object({ token: z.string().check(z.minLength(1), z.maxLength(512)), email: z.optional(Email) })
  .register(z.globalRegistry, { id: 'VerifyEmailDto' });

export type UpdateUserDto = z.infer<typeof UpdateUserDto>;
