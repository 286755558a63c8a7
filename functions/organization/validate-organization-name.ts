import { endpoint } from '../../lib/http/endpoint';
import { validateOrganizationName } from '../../lib/organizations';
import {
  ValidateOrganizationNameDto,
  ValidateOrganizationNameResponseEntity,
} from '../../schemas/organization/organization';
import * as routes from '../routes';

/** POST /organization/validate-name (internal, no auth): isValid false when the name is taken. */
export const handler = endpoint(
  routes.validateOrganizationName,
  { body: ValidateOrganizationNameDto, response: ValidateOrganizationNameResponseEntity },
  ({ body }) => validateOrganizationName(body),
);
