import { and, asc, count, eq, type SQL } from 'drizzle-orm';
import { db } from '../../db/client';
import { tags } from '../../db/schema/review';
import { type PagingInput, pageWindow, sortDirection, toPage } from '../../paging';
import { toReviewTag } from './tag-writes';

/**
 * One page of the tags `scope` names, by name (then type and id, so pages never overlap); active
 * ones unless `includeInactive`. Two queries whatever the size. The case and organization tag
 * lists are this with their own scope.
 */
export async function tagPage(scope: SQL, query: PagingInput & { includeInactive?: boolean | undefined }) {
  const where = and(scope, query.includeInactive ? undefined : eq(tags.isActive, true));
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
