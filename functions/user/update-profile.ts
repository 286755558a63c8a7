import { endpoint } from '../../lib/http/endpoint';
import { updateProfile } from '../../lib/users';
import { UpdateUserDto } from '../../schemas/user/update-user';
import { routes } from '../routes';

/** PATCH /user/profile: updates the editable fields and returns the freshly built profile. */
export const handler = endpoint(routes.updateProfile, { body: UpdateUserDto }, ({ body, actor }) => updateProfile(actor, body));
