import * as z from 'zod/mini';
import { DisplayName, Email, Password } from '../common/fields';
import { OrganizationDetailsResponseEntity } from '../common/organization';
import { OrganizationName } from '../organization/organization';
import { UserEntity } from '../user/user-entity';

export const RegisterEmailDto = z
  .object({
    name: DisplayName,
    email: Email,
    password: Password,
    // Must be true: described as `const: true`, while false stays the handler's 400 TERMS_NOT_ACCEPTED.
    acceptTerms: z.boolean().register(z.globalRegistry, {
      const: true,
      description: 'Must be true; false is answered 400 TERMS_NOT_ACCEPTED',
    }),
    organizationName: z.optional(OrganizationName),
    inviteEmails: z.optional(z.array(Email).check(z.maxLength(50))),
  })
  .register(z.globalRegistry, { id: 'RegisterEmailDto' });

export const RegisterResponseEntity = z
  .object({
    accessToken: z.string(),
    refreshToken: z.string(),
    userProfile: UserEntity,
    organizationInfo: z.optional(OrganizationDetailsResponseEntity),
  })
  .register(z.globalRegistry, { id: 'RegisterResponseEntity' });

export type RegisterEmailDto = z.infer<typeof RegisterEmailDto>;
