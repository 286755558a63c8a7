import { endpoint } from '../../lib/http/endpoint';
import { listCaseTags } from '../../lib/review';
import { CaseTagsPath, ListCaseTagsQuery, ReviewTagPageEntity } from '../../schemas/review/tags';
import * as routes from '../routes';

/** GET /cases/{caseId}/tags (extension): the tags the caller may see and use in the case, by name. */
export const handler = endpoint(
  routes.listCaseTags,
  { path: CaseTagsPath, query: ListCaseTagsQuery, response: ReviewTagPageEntity },
  ({ caseContext, actor, query }) => listCaseTags({ caseContext, userId: actor.user.id }, query),
);
