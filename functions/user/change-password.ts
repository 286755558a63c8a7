import { endpoint } from '../../lib/http/endpoint';
import { changePassword } from '../../lib/auth';
import { ChangePasswordDto } from '../../schemas/user/update-user';
import { UserEntity } from '../../schemas/user/user-entity';
import * as routes from '../routes';

/** POST /user/change-password: 400 when the old password is wrong; returns the fresh profile. */
export const handler = endpoint(
  routes.changePassword,
  { body: ChangePasswordDto, response: UserEntity },
  ({ body, actor }) => changePassword({ actor }, body),
);
