import { and, eq } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { ListCaseTagsQuery } from '../../../schemas/review/tags';
import type { CaseContext } from '../../cases/context';
import { tags } from '../../db/schema/review';
import { tagViewerOf, visibleTag } from '../tag-visibility';
import { tagPage } from './tag-page';

/**
 * GET /cases/{caseId}/tags: the tags the caller may use in the case (system tags, and of their
 * side the organization's, the case's and their own user tags), by name; active ones unless
 * `includeInactive`. Two queries whatever the size.
 */
export async function listCaseTags(
  ctx: { caseContext: CaseContext; userId: string },
  query: z.output<typeof ListCaseTagsQuery>,
) {
  const visible = visibleTag(tagViewerOf(ctx.caseContext, ctx.userId));
  return tagPage(query.type ? and(visible, eq(tags.type, query.type))! : visible, query);
}
