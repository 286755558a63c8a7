import type { CaseContext } from '../../cases/context';
import { assertCaseTagChangeable, caseTagsOf } from './case-tag-access';
import { deactivateTag, toReviewTag } from './tag-writes';

/** DELETE /cases/{caseId}/tags/{tagId}: deactivates a case tag or the caller's user tag, keeping its links and history. */
export async function deleteCaseTag(ctx: { caseContext: CaseContext; userId: string }, tagId: string) {
  const row = await deactivateTag(tagId, caseTagsOf(ctx.caseContext, ctx.userId), assertCaseTagChangeable);
  return toReviewTag(row);
}
