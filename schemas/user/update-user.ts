import * as z from 'zod/mini';
import { DisplayName, Email, Password } from '../common/fields';
import { ONBOARDING_STATUSES, USER_TYPES } from './user-entity';

const PhoneNumber = z.string().check(z.trim(), z.regex(/^\+?[0-9][0-9 ().-]{2,30}$/, 'Not a phone number'));

export const UpdateUserDto = z
  .strictObject({
    name: z.optional(DisplayName),
    phoneNumbers: z.optional(z.array(PhoneNumber).check(z.maxLength(10))),
    onboardingStatus: z.optional(z.enum(ONBOARDING_STATUSES)),
    onboardingStep: z.optional(z.int().check(z.minimum(0), z.maximum(100))),
    userType: z.optional(z.nullable(z.enum(USER_TYPES))),
  })
  .register(z.globalRegistry, { id: 'UpdateUserDto' });

export const ChangePasswordDto = z
  .strictObject({ oldPassword: z.string().check(z.minLength(1), z.maxLength(128)), newPassword: Password })
  .register(z.globalRegistry, { id: 'ChangePasswordDto' });

export const VerifyEmailDto = z
  .strictObject({ token: z.string().check(z.minLength(1), z.maxLength(512)), email: z.optional(Email) })
  .register(z.globalRegistry, { id: 'VerifyEmailDto' });

export type UpdateUserDto = z.infer<typeof UpdateUserDto>;
