import { endpoint } from '../../lib/http/endpoint';
import { createOrganizationTag } from '../../lib/review';
import { CreateOrganizationTagDto, OrganizationTagsPath, ReviewTagEntity } from '../../schemas/review/tags';
import * as routes from '../routes';

/** POST /organization/{orgId}/tags (extension): an organization tag for every case of the firm. */
export const handler = endpoint(
  routes.createOrganizationTag,
  { path: OrganizationTagsPath, body: CreateOrganizationTagDto, response: ReviewTagEntity },
  ({ organization, actor, body }) => createOrganizationTag({ organization, userId: actor.user.id }, body),
);
