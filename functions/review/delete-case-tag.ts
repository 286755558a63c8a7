import { endpoint } from '../../lib/http/endpoint';
import { deleteCaseTag } from '../../lib/review';
import { CaseTagPath, ReviewTagEntity } from '../../schemas/review/tags';
import * as routes from '../routes';

/** DELETE /cases/{caseId}/tags/{tagId} (extension): deactivates a case or user tag, keeping its history. */
export const handler = endpoint(
  routes.deleteCaseTag,
  { path: CaseTagPath, response: ReviewTagEntity },
  ({ caseContext, actor, path }) => deleteCaseTag({ caseContext, userId: actor.user.id }, path.tagId),
);
