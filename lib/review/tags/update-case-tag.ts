import type * as z from 'zod/mini';
import type { UpdateTagDto } from '../../../schemas/review/tags';
import type { CaseContext } from '../../cases/context';
import { assertCaseTagChangeable, caseTagsOf } from './case-tag-access';
import { changeTag, toReviewTag } from './tag-writes';

/** PATCH /cases/{caseId}/tags/{tagId}: a case tag's or the caller's user tag's name, colours or severity. */
export async function updateCaseTag(
  ctx: { caseContext: CaseContext; userId: string },
  tagId: string,
  input: z.output<typeof UpdateTagDto>,
) {
  const row = await changeTag(tagId, caseTagsOf(ctx.caseContext, ctx.userId), assertCaseTagChangeable, input);
  return toReviewTag(row);
}
