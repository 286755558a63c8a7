import { endpoint } from '../../lib/http/endpoint';
import { updateProfile } from '../../lib/users';
import { UpdateUserDto } from '../../schemas/user/update-user';
import { UserEntity } from '../../schemas/user/user-entity';
import * as routes from '../routes';

/** PATCH /user/profile: updates the editable fields and returns the freshly built profile. */
export const handler = endpoint(
  routes.updateProfile,
  { body: UpdateUserDto, response: UserEntity },
  ({ body, actor }) => updateProfile({ actor }, body),
);
