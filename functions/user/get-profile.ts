import { endpoint } from '../../lib/http/endpoint';
import { cachedUserProfile } from '../../lib/users/profile';
import { UserEntity } from '../../schemas/user/user-entity';
import { routes } from '../routes';

/** GET /user/profile: the caller's profile with every organization (may be up to 60 s old). */
export const handler = endpoint(routes.getProfile, { response: UserEntity }, ({ actor }) =>
  cachedUserProfile(actor.user.id),
);
