import { and, count, eq, type SQL } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { ListOrganizationTagsQuery } from '../../../schemas/review/tags';
import { db } from '../../db/client';
import { tags } from '../../db/schema';
import type { OrganizationContext } from '../../organizations/context';
import { pageWindow, sortDirection, toPage } from '../../paging';
import { organizationTagsOf } from './organization-tag-access';
import { toReviewTag } from './tag-writes';

/** GET /organization/{orgId}/tags: the organization's tags by name, active ones unless `includeInactive`. Two queries. */
export async function listOrganizationTags(
  ctx: { organization: OrganizationContext },
  query: z.output<typeof ListOrganizationTagsQuery>,
) {
  const conditions: SQL[] = [organizationTagsOf(ctx.organization.id)];
  if (!query.includeInactive) conditions.push(eq(tags.isActive, true));
  const where = and(...conditions);
  const window = pageWindow(query);
  const direction = sortDirection(query.sortOrder, 'asc');
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(tags)
      .where(where)
      .orderBy(direction(tags.nameLowercase), direction(tags.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(tags).where(where),
  ]);
  return toPage(window, totals!.total, rows.map(toReviewTag));
}
