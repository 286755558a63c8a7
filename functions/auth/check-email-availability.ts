import { endpoint } from '../../lib/http/endpoint';
import { checkEmailAvailability } from '../../lib/users';
import { CheckEmailAvailabilityDto, EmailAvailabilityEntity } from '../../schemas/auth/check-email-availability';
import * as routes from '../routes';

/** POST /auth/check-email-availability: no auth, 10 requests per minute. */
export const handler = endpoint(
  routes.checkEmailAvailability,
  { body: CheckEmailAvailabilityDto, response: EmailAvailabilityEntity },
  ({ body }) => checkEmailAvailability(body),
);
