import { endpoint } from '../../lib/http/endpoint';
import { getProfile } from '../../lib/users';
import { UserEntity } from '../../schemas/user/user-entity';
import * as routes from '../routes';

/** GET /user/profile: the caller's profile with every organization (may be up to 60 s old). */
export const handler = endpoint(routes.getProfile, { response: UserEntity }, ({ actor }) => getProfile({ actor }));
