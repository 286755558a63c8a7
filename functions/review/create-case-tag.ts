import { endpoint } from '../../lib/http/endpoint';
import { createCaseTag } from '../../lib/review';
import { CaseTagsPath, CreateCaseTagDto, ReviewTagEntity } from '../../schemas/review/tags';
import * as routes from '../routes';

/** POST /cases/{caseId}/tags (extension): a case tag or the caller's user tag, on the caller's side. */
export const handler = endpoint(
  routes.createCaseTag,
  { path: CaseTagsPath, body: CreateCaseTagDto, response: ReviewTagEntity },
  ({ caseContext, actor, body }) => createCaseTag({ caseContext, userId: actor.user.id }, body),
);
