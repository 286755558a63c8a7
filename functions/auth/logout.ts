import { logout } from '../../lib/auth';
import { endpoint } from '../../lib/http/endpoint';
import { EmptyEntity } from '../../schemas/common/fields';
import * as routes from '../routes';

/** POST /auth/logout: deletes the session of the bearer token; `data` is always {}. */
export const handler = endpoint(routes.logout, { response: EmptyEntity }, ({ actor }) => logout({ actor }));
