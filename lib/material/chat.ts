import { and, count, desc, eq, type SQL, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { materialProfiles, supportTickets } from '../db/schema';
import { NotFoundError } from '../http/errors';
import { pageWindow, type PagingInput, toPage } from '../paging';
import { materialAccess, prefixTsQuery } from './access';

/** A stored time text as ISO 8601 UTC, or null when it is no time. */
function isoTime(text: string | undefined): string | null {
  if (!text) return null;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}

/**
 * GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets: the profile's tickets
 * with their comments, newest first; searchText over subject and comment text (full-text index).
 * For opposing counsel a profile they may not see answers an empty page.
 */
export async function profileSupportTickets(caseId: string, profileId: string, userId: string, query: PagingInput & { searchText?: string }) {
  const { opposing } = await materialAccess(caseId, userId);
  const window = pageWindow(query);
  const [profile] = await db()
    .select()
    .from(materialProfiles)
    .where(and(eq(materialProfiles.id, profileId), eq(materialProfiles.caseId, caseId), eq(materialProfiles.platform, 'chat_platform')));
  if (!profile) throw new NotFoundError('Unknown chat-platform profile');
  if (opposing && !profile.visibleToOpposingCounsel) return toPage(window, 0, []);
  const filters: SQL[] = [eq(supportTickets.profileId, profileId)];
  if (query.searchText) {
    const tsQuery = prefixTsQuery(query.searchText);
    if (!tsQuery) return toPage(window, 0, []);
    filters.push(sql`${supportTickets.search} @@ to_tsquery('simple', ${tsQuery})`);
  }
  const where = and(...filters);
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(supportTickets)
      .where(where)
      .orderBy(sql`${supportTickets.ticketCreatedAt} desc nulls last`, desc(supportTickets.ticketId))
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
