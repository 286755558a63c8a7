import { endpoint } from '../../lib/http/endpoint';
import { listMyOrganizations } from '../../lib/organizations';
import { OrganizationListEntity } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/user/organizations: all the caller's organizations in one page, with active plans. */
export const handler = endpoint(routes.listMyOrganizations, { response: OrganizationListEntity }, ({ actor }) =>
  listMyOrganizations({ actor }),
);
