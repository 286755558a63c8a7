import { and, asc, count, eq, type SQL } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { ListCaseTagsQuery } from '../../../schemas/review/tags';
import type { CaseContext } from '../../cases/context';
import { db } from '../../db/client';
import { tags } from '../../db/schema';
import { pageWindow, sortDirection, toPage } from '../../paging';
import { tagViewerOf, visibleTag } from '../tag-visibility';
import { toReviewTag } from './tag-writes';

/**
 * GET /cases/{caseId}/tags: the tags the caller may use in the case (system tags, and of their
 * side the organization's, the case's and their own user tags), by name; active ones unless
 * `includeInactive`. Two queries whatever the size.
 */
export async function listCaseTags(
  ctx: { caseContext: CaseContext; userId: string },
  query: z.output<typeof ListCaseTagsQuery>,
) {
  const conditions: SQL[] = [visibleTag(tagViewerOf(ctx.caseContext, ctx.userId))];
  if (query.type) conditions.push(eq(tags.type, query.type));
  if (!query.includeInactive) conditions.push(eq(tags.isActive, true));
  const where = and(...conditions);
  const window = pageWindow(query);
  const direction = sortDirection(query.sortOrder, 'asc');
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(tags)
      .where(where)
      .orderBy(direction(tags.nameLowercase), asc(tags.type), direction(tags.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(tags).where(where),
  ]);
  return toPage(window, totals!.total, rows.map(toReviewTag));
}
