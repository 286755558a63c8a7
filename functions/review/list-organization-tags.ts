import { endpoint } from '../../lib/http/endpoint';
import { listOrganizationTags } from '../../lib/review';
import { ListOrganizationTagsQuery, OrganizationTagsPath, ReviewTagPageEntity } from '../../schemas/review/tags';
import * as routes from '../routes';

/** GET /organization/{orgId}/tags (extension): the organization's tags, by name. */
export const handler = endpoint(
  routes.listOrganizationTags,
  { path: OrganizationTagsPath, query: ListOrganizationTagsQuery, response: ReviewTagPageEntity },
  ({ organization, query }) => listOrganizationTags({ organization }, query),
);
