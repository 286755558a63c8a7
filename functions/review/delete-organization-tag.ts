import { endpoint } from '../../lib/http/endpoint';
import { deleteOrganizationTag } from '../../lib/review';
import { OrganizationTagPath, ReviewTagEntity } from '../../schemas/review/tags';
import * as routes from '../routes';

/** DELETE /organization/{orgId}/tags/{tagId} (extension): deactivates an organization tag, keeping its history. */
export const handler = endpoint(
  routes.deleteOrganizationTag,
  { path: OrganizationTagPath, response: ReviewTagEntity },
  ({ organization, path }) => deleteOrganizationTag({ organization }, path.tagId),
);
