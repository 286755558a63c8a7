import * as z from 'zod/mini';
import { Email } from '../common/fields';

export const CheckEmailAvailabilityDto = z
  .object({ email: Email })
  .register(z.globalRegistry, { id: 'CheckEmailAvailabilityDto' });

export const EmailAvailabilityEntity = z
  .object({ isAvailable: z.boolean(), type: z.nullable(z.enum(['user', 'custodian'])) })
  .register(z.globalRegistry, { id: 'EmailAvailabilityEntity' });
