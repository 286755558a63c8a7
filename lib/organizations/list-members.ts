import type * as z from 'zod/mini';
import { and, asc, desc, eq, ilike, or, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { organizationMembers } from '../db/schema/organizations';
import { users } from '../db/schema/users';
import { containsPattern } from '../db/like';
import { pageWindow, toPage } from '../paging';
import type { MembersQuery } from '../../schemas/organization/members';
import type { OrganizationContext } from './context';

/** GET /organization/{orgId}/members: one page and the total, in two queries; `data` null when none match. */
export async function listMembers(
  { organization }: { organization: OrganizationContext },
  query: z.output<typeof MembersQuery>,
) {
  const window = pageWindow(query);
  const pattern = query.searchText ? containsPattern(query.searchText) : undefined;
  const where = and(
    eq(organizationMembers.organizationId, organization.id),
    query.role ? eq(organizationMembers.role, query.role) : undefined,
    pattern ? or(ilike(users.name, pattern), ilike(users.email, pattern)) : undefined,
  );
  const direction = query.sortOrder === 'desc' ? desc : asc;
  const [[totals], rows] = await Promise.all([
    db()
      .select({ total: sql<number>`count(*)::int` })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(where),
    db()
      .select({
        id: users.id,
        name: users.name,
        email: users.email,
        role: organizationMembers.role,
        lastActiveAt: users.lastActiveAt,
      })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(where)
      .orderBy(direction(organizationMembers.createdAt), direction(users.id))
      .limit(window.size)
      .offset(window.offset),
  ]);
  const records = rows.map((row) => ({
    user: { id: row.id, name: row.name, email: row.email },
    role: row.role,
    lastActivityAt: row.lastActiveAt?.toISOString() ?? null,
  }));
  return toPage(window, totals!.total, records, { emptyAsNull: true });
}
