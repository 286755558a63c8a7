import { and, count, eq, type SQL, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { ChatProfilePath, SupportTicketsQuery } from '../../schemas/material/material';
import type { CaseContext } from '../cases/context';
import { db } from '../db/client';
import { materialProfiles, supportTickets } from '../db/schema/material';
import { idEquals } from '../ids';
import { pageWindow, sortDirection, toPage } from '../paging';
import { ChatProfileNotFoundError } from './errors';
import { prefixTsQuery } from './text-search';

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
export async function listSupportTickets(
  ctx: { caseContext: CaseContext },
  input: Pick<z.output<typeof ChatProfilePath>, 'chatPlatformId'> & z.output<typeof SupportTicketsQuery>,
) {
  const caseId = ctx.caseContext.case.id;
  const opposing = ctx.caseContext.access === 'opposing_counsel';
  const window = pageWindow(input);
  const [profile] = await db()
    .select()
    .from(materialProfiles)
    .where(
      and(
        idEquals(materialProfiles.id, input.chatPlatformId),
        eq(materialProfiles.caseId, caseId),
        eq(materialProfiles.platform, 'chat_platform'),
      ),
    );
  if (!profile) throw new ChatProfileNotFoundError();
  if (opposing && !profile.visibleToOpposingCounsel) return toPage(window, 0, []);
  const filters: SQL[] = [eq(supportTickets.profileId, profile.id)];
  if (input.searchText) {
    const tsQuery = prefixTsQuery(input.searchText);
    if (!tsQuery) return toPage(window, 0, []);
    filters.push(sql`${supportTickets.search} @@ to_tsquery('simple', ${tsQuery})`);
  }
  const where = and(...filters);
  const direction = sortDirection(input.sortOrder, 'asc');
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
