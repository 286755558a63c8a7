import { endpoint } from '../../lib/http/endpoint';
import { updateCaseTag } from '../../lib/review';
import { CaseTagPath, ReviewTagEntity, UpdateTagDto } from '../../schemas/review/tags';
import * as routes from '../routes';

/** PATCH /cases/{caseId}/tags/{tagId} (extension): a case or user tag's name, colours or severity. */
export const handler = endpoint(
  routes.updateCaseTag,
  { path: CaseTagPath, body: UpdateTagDto, response: ReviewTagEntity },
  ({ caseContext, actor, path, body }) => updateCaseTag({ caseContext, userId: actor.user.id }, path.tagId, body),
);
