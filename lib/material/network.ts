import { and, count, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { MaterialPagingQuery, SearchMessagesQuery } from '../../schemas/material/material';
import type { CaseContext } from '../cases/context';
import { db } from '../db/client';
import { materialProfiles, networkConversations, networkMessageLexemes, networkMessages } from '../db/schema/material';
import { networkConversationTags, tags } from '../db/schema/review';
import { idIn } from '../ids';
import { pageWindow, sortDirection, toPage } from '../paging';
import { tagViewerOf, usableTag } from '../review/tag-visibility';
import { expandedPrefixTsQuery } from './text-search';

/** GET /professional-network/{caseId}/profiles (extension) */
export const listNetworkProfiles = (ctx: { caseContext: CaseContext }, query: z.output<typeof MaterialPagingQuery>) =>
  listProfiles(ctx.caseContext, 'professional_network', query);

/** GET /chat-platform/{caseId}/profiles (extension) */
export const listChatProfiles = (ctx: { caseContext: CaseContext }, query: z.output<typeof MaterialPagingQuery>) =>
  listProfiles(ctx.caseContext, 'chat_platform', query);

/** The case's profiles of one platform by name (sortOrder desc reverses); opposing counsel see only visible ones. */
async function listProfiles(
  caseContext: CaseContext,
  platform: 'professional_network' | 'chat_platform',
  query: z.output<typeof MaterialPagingQuery>,
) {
  const caseId = caseContext.case.id;
  const opposing = caseContext.access === 'opposing_counsel';
  const where = and(
    eq(materialProfiles.caseId, caseId),
    eq(materialProfiles.platform, platform),
    opposing ? eq(materialProfiles.visibleToOpposingCounsel, true) : undefined,
  );
  const window = pageWindow(query);
  const direction = sortDirection(query.sortOrder, 'asc');
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(materialProfiles)
      .where(where)
      .orderBy(direction(materialProfiles.name), direction(materialProfiles.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(materialProfiles).where(where),
  ]);
  return toPage(
    window,
    totals!.total,
    rows.map((p) => ({
      id: p.id,
      externalId: p.externalId,
      name: p.name,
      platform: p.platform,
      visibleToOpposingCounsel: p.visibleToOpposingCounsel,
    })),
  );
}

/**
 * GET /professional-network/{caseId}/search-messages: full-text search (GIN index on a generated
 * tsvector of subject and content, word-prefix matching, each prefix read as the exact lexemes it
 * covers when they are few: see expandedPrefixTsQuery) across every conversation of the case,
 * newest first as the contract says (sortOrder asc for oldest first), optionally only conversations
 * carrying all given tags (active links of tags the caller may see: a tag of the other side
 * matches nothing). Opposing counsel never see messages of profiles not visible to them.
 */
export async function searchNetworkMessages(
  ctx: { caseContext: CaseContext; userId: string },
  query: z.output<typeof SearchMessagesQuery>,
) {
  const caseId = ctx.caseContext.case.id;
  const opposing = ctx.caseContext.access === 'opposing_counsel';
  const window = pageWindow(query);
  const tsQuery = expandedPrefixTsQuery(query.searchText, networkMessageLexemes, networkMessageLexemes.lexeme);
  if (!tsQuery) return toPage(window, 0, []);
  const filters: SQL[] = [eq(networkMessages.caseId, caseId), sql`${networkMessages.search} @@ ${tsQuery}`];
  // Lowercased: the same UUID in another letter case is the same tag, and counts once below.
  const tagIds = [...new Set((query.tags ?? []).map((id) => id.toLowerCase()))];
  if (tagIds.length) {
    filters.push(
      inArray(
        networkMessages.conversationId,
        db()
          .select({ id: networkConversationTags.conversationId })
          .from(networkConversationTags)
          .innerJoin(tags, eq(tags.id, networkConversationTags.tagId))
          // A tag id that is not a UUID is on no conversation, nor is a tag the caller may not see
          // or a deleted (inactive) one, so the count below never reaches the number asked for:
          // `tags=abc` matches nothing.
          .where(
            and(
              idIn(networkConversationTags.tagId, tagIds),
              isNull(networkConversationTags.removedAt),
              usableTag(tagViewerOf(ctx.caseContext, ctx.userId)),
            ),
          )
          .groupBy(networkConversationTags.conversationId)
          .having(sql`count(distinct ${networkConversationTags.tagId}) = ${tagIds.length}`),
      ),
    );
  }
  if (opposing) {
    filters.push(
      inArray(
        networkMessages.profileId,
        db()
          .select({ id: materialProfiles.id })
          .from(materialProfiles)
          .where(and(eq(materialProfiles.caseId, caseId), eq(materialProfiles.visibleToOpposingCounsel, true))),
      ),
    );
  }
  const direction = sortDirection(query.sortOrder, 'desc');
  // One statement, one index pass: the matches (id and date only) are collected once from the GIN
  // index and the heap, then counted for `total` and sorted top-N for the page; only the page's
  // rows are read whole and joined to their conversation. Referenced twice, the CTE is materialized.
  const matches = db()
    .$with('matches')
    .as(
      db()
        .select({ id: networkMessages.id, date: networkMessages.date })
        .from(networkMessages)
        .where(and(...filters)),
    );
  const totals = db()
    .select({ total: count().as('total') })
    .from(matches)
    .as('totals');
  const page = db()
    .select({ id: matches.id, date: matches.date })
    .from(matches)
    .orderBy(direction(matches.date), direction(matches.id))
    .limit(window.size)
    .offset(window.offset)
    .as('page');
  // From the count, left-joined to the page: a page past the end still brings the total.
  const joined = await db()
    .with(matches)
    .select({
      total: totals.total,
      message: networkMessages,
      title: networkConversations.title,
      participants: networkConversations.participants,
    })
    .from(totals)
    .leftJoin(page, sql`true`)
    .leftJoin(networkMessages, eq(networkMessages.id, page.id))
    .leftJoin(networkConversations, eq(networkConversations.id, networkMessages.conversationId))
    .orderBy(direction(page.date), direction(page.id));
  const rows = joined.flatMap(({ message, title, participants }) =>
    message ? [{ message, title: title!, participants: participants! }] : [],
  );
  return toPage(
    window,
    joined[0]!.total,
    rows.map(({ message, title, participants }) => ({
      id: message.id,
      from: message.from,
      to: message.to,
      date: message.date.toISOString(),
      subject: message.subject,
      content: message.content,
      folder: message.folder,
      isDraft: message.isDraft,
      attachments: message.attachments,
      conversationId: message.conversationId,
      conversationTitle: title,
      participants,
      profileId: message.profileId,
    })),
  );
}
