import { and, count, eq, type SQL, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { materialProfiles, supportTickets } from '../db/schema';
import { NotFoundError } from '../http/errors';
import { idEquals } from '../ids';
import { pageWindow, type PagingInput, sortDirection, toPage } from '../paging';
import { materialAccess, prefixTsQuery } from './access';

/** A stored time text as ISO 8601 UTC, or null when it is no time. */
function isoTime(text: string | undefined): string | null {
  if (!text) return null;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}

/**
 * GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets: the profile's tickets
 * with their comments, oldest first (the contract's common paging default, sortOrder asc; desc for
 * newest first; tickets without a time last either way); searchText over subject and comment text.
 * For opposing counsel a profile they may not see answers an empty page.
 */
export async function profileSupportTickets(
  caseId: string,
  profileId: string,
  userId: string,
  query: PagingInput & { searchText?: string },
) {
  const { opposing } = await materialAccess(caseId, userId);
  const window = pageWindow(query);
  const [profile] = await db()
    .select()
    .from(materialProfiles)
    .where(
      and(
        idEquals(materialProfiles.id, profileId),
        idEquals(materialProfiles.caseId, caseId),
        eq(materialProfiles.platform, 'chat_platform'),
      ),
    );
  if (!profile) throw new NotFoundError('Unknown chat-platform profile');
  if (opposing && !profile.visibleToOpposingCounsel) return toPage(window, 0, []);
  const filters: SQL[] = [eq(supportTickets.profileId, profile.id)];
  if (query.searchText) {
    const tsQuery = prefixTsQuery(query.searchText);
    if (!tsQuery) return toPage(window, 0, []);
    filters.push(sql`${supportTickets.search} @@ to_tsquery('simple', ${tsQuery})`);
  }
  const where = and(...filters);
  const direction = sortDirection(query.sortOrder, 'asc');
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(supportTickets)
      .where(where)
      .orderBy(sql`${direction(supportTickets.ticketCreatedAt)} nulls last`, direction(supportTickets.ticketId))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(supportTickets).where(where),
  ]);
  return toPage(
    window,
    totals!.total,
    rows.map((ticket) => ({
      id: ticket.id,
      chatUserProvider: ticket.profileId,
      ticketId: ticket.ticketId,
      subject: ticket.subject,
      status: ticket.status,
      ticketCreatedAt: ticket.ticketCreatedAt?.toISOString() ?? null,
      comments: ticket.comments.map((c) => ({
        author: c.author,
        comment: c.comment,
        // The contract types a comment's createdAt as date-time; exports carry free text (or none).
        createdAt: isoTime(c.createdAt) ?? (ticket.ticketCreatedAt ?? ticket.createdAt).toISOString(),
      })),
      createdAt: ticket.createdAt.toISOString(),
      updatedAt: ticket.updatedAt.toISOString(),
    })),
  );
}
