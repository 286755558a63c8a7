import type * as z from 'zod/mini';
import type { CreateCaseTagDto } from '../../../schemas/review/tags';
import type { CaseContext } from '../../cases/context';
import { reviewSide } from '../tag-visibility';
import { insertTag, toReviewTag } from './tag-writes';

/**
 * POST /cases/{caseId}/tags: a case tag (seen by the caller's side of the case) or, with
 * `type: user`, the caller's own tag in the case. It belongs to the caller's side.
 */
export async function createCaseTag(
  ctx: { caseContext: CaseContext; userId: string },
  input: z.output<typeof CreateCaseTagDto>,
) {
  const { type = 'case', ...look } = input;
  const row = await insertTag(
    {
      organizationId: ctx.caseContext.case.organizationId,
      caseId: ctx.caseContext.case.id,
      type,
      side: reviewSide(ctx.caseContext),
      createdById: ctx.userId,
    },
    look,
  );
  return toReviewTag(row);
}
