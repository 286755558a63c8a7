import * as z from 'zod/mini';
import { DateTime, Id } from '../common/fields';
import { OrganizationDetailsResponseEntity } from '../common/organization';

export const UserEntity = z
  .object({
    id: Id,
    email: z.string(),
    name: z.string(),
    phoneNumbers: z.array(z.string()),
    isEmailVerified: z.boolean(),
    onboardingStatus: z.string(),
    onboardingStep: z.number(),
    userType: z.nullable(z.string()),
    createdAt: DateTime,
    updatedAt: DateTime,
    organizations: z.array(OrganizationDetailsResponseEntity),
  })
  .register(z.globalRegistry, { id: 'UserEntity' });
