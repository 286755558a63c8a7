import { endpoint } from '../../lib/http/endpoint';
import { updateOrganizationTag } from '../../lib/review';
import { OrganizationTagPath, ReviewTagEntity, UpdateTagDto } from '../../schemas/review/tags';
import * as routes from '../routes';

/** PATCH /organization/{orgId}/tags/{tagId} (extension): an organization tag's name, colours or severity. */
export const handler = endpoint(
  routes.updateOrganizationTag,
  { path: OrganizationTagPath, body: UpdateTagDto, response: ReviewTagEntity },
  ({ organization, path, body }) => updateOrganizationTag({ organization }, path.tagId, body),
);
