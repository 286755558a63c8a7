import { sql } from 'drizzle-orm';
import { db } from '../../db/client';
import { rawRows } from '../../db/raw-rows';
import type { tags } from '../../db/schema/review';
import { type PageWindow, type PagingInput, pageWindow, toPage } from '../../paging';
import { toTagEntity } from '../tag-entity';
import {
  type CaseSearch,
  linkOf,
  matchRowsSql,
  SEARCH_KINDS,
  type SearchKind,
  type SearchViewer,
  searchTsQuery,
  visibleTagIds,
} from './match';
import {
  HEADLINE_OPTIONS,
  HIGHLIGHT_START,
  HIGHLIGHT_STOP,
  SHORT_TEXT,
  snippetOf,
  WHOLE_TEXT_OPTIONS,
} from './snippets';

/** How many participant domains the facets list (the most frequent). */
export const MAX_DOMAIN_FACETS = 20;

export interface CaseSearchPaging extends PagingInput {
  sortBy?: 'relevance' | 'date';
}

interface TagJson {
  id: string;
  organization_id: string;
  case_id: string | null;
  name: string;
  name_lowercase: string;
  background_color: string;
  text_color: string;
  type: (typeof tags.$inferSelect)['type'];
  severity: (typeof tags.$inferSelect)['severity'];
  origin: (typeof tags.$inferSelect)['origin'];
  creator_access_type: (typeof tags.$inferSelect)['creatorAccessType'];
  created_by_id: string | null;
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

interface ItemJson {
  kind: SearchKind;
  id: string;
  date: string | null;
  thread_id: string | null;
  conversation_id: string | null;
  profile_id: string | null;
  device_id: string | null;
  title: string | null;
  headline: string | null;
  participants: Array<string | null> | null;
  tags: TagJson[] | null;
}

interface SearchRow {
  kinds: Array<{ kind: SearchKind; count: number }> | null;
  tag_facets: Array<{ tag_id: string; name: string; count: number }> | null;
  domains: Array<{ domain: string; count: number }> | null;
  items: ItemJson[] | null;
}

const TAG_JSON = sql.raw(`json_build_object('id', t.id, 'organization_id', t.organization_id, 'case_id', t.case_id,
  'name', t.name, 'name_lowercase', t.name_lowercase, 'background_color', t.background_color,
  'text_color', t.text_color, 'type', t.type, 'severity', t.severity, 'origin', t.origin,
  'creator_access_type', t.creator_access_type, 'created_by_id', t.created_by_id, 'is_active', t.is_active,
  'created_at', t.created_at, 'updated_at', t.updated_at)`);

/** The page's order: relevance (ts_rank) or date, ties newest first, then by id so pages never overlap. */
function pageOrder(paging: CaseSearchPaging, alias: 'm' | 'p') {
  const direction = sql.raw((paging.sortOrder ?? 'desc') === 'asc' ? 'asc' : 'desc');
  const a = sql.raw(alias);
  return paging.sortBy === 'date'
    ? sql`${a}.date ${direction} nulls last, ${a}.id ${direction}`
    : sql`${a}.rank ${direction}, ${a}.date desc nulls last, ${a}.id desc`;
}

/** The text a snippet is cut from, per kind: what the search vector holds besides the title. */
const SNIPPET_TEXT = sql.raw(`case p.kind
  when 'email' then coalesce(e.body, e.snippet, '')
  when 'network-message' then nm.content
  when 'support-ticket' then coalesce((select string_agg(c->>'comment', ' … ') from jsonb_array_elements(st.comments) c), '')
  else coalesce(dn.summary, '') || ' ' || regexp_replace(coalesce(dn.html_content, ''), '<[^>]*>', ' ', 'g')
end`);

/** The active tags of an item the viewer sees, per kind. */
function itemTags(viewer: SearchViewer) {
  const of = (kind: SearchKind, item: string) => {
    const { table, item: column } = linkOf(kind);
    return sql`(select json_agg(${TAG_JSON} order by t.name_lowercase, t.id) from tags t where t.id in ${visibleTagIds(viewer)} and t.id in (select l.tag_id from ${sql.raw(table)} l where l.${sql.raw(column)} = ${sql.raw(item)} and l.removed_at is null))`;
  };
  return sql`case p.kind when 'email' then ${of('email', 'p.id')} when 'network-message' then ${of('network-message', 'p.tagged_id')} when 'support-ticket' then ${of('support-ticket', 'p.id')} else ${of('device-note', 'p.id')} end`;
}

/**
 * Tag facet: the tags on the matches, as (tag) rows, one per active link of a match to a tag the
 * viewer sees (a network message carries its conversation's tags). Driven from the matches through
 * each link table's item index, so its cost follows the match, not every link of the case.
 */
function matchedTagLinks(search: CaseSearch) {
  const kinds = new Set(search.kinds);
  return sql.join(
    SEARCH_KINDS.filter((k) => kinds.has(k)).map((kind) => {
      const { table, item } = linkOf(kind);
      return sql`select l.tag_id from matches m join ${sql.raw(table)} l on l.${sql.raw(item)} = m.tagged_id and l.removed_at is null where m.kind = ${kind}`;
    }),
    sql` union all `,
  );
}

/**
 * GET /cases/{caseId}/search: one statement whatever the case's size. The matches of every kind
 * (kind, id, date, rank) are collected once, from each kind's GIN index, into a CTE; the total,
 * the facets and the page are read from it; only the page's rows are read whole, with their
 * snippet (ts_headline, marked with control characters read back as ranges), participants and tags.
 */
export async function searchCase(viewer: SearchViewer, search: CaseSearch, paging: CaseSearchPaging) {
  const window: PageWindow = pageWindow(paging);
  const [row] = await rawRows<SearchRow>(db(), caseSearchStatement(viewer, search, paging, window));
  return toSearchPage(window, row);
}

/** The one statement of a search: total, facets and the page's items as JSON, one row. */
export function caseSearchStatement(
  viewer: SearchViewer,
  search: CaseSearch,
  paging: CaseSearchPaging,
  window: PageWindow,
) {
  const ranked = (paging.sortBy ?? 'relevance') === 'relevance';
  const tsQuery = searchTsQuery(search);
  const statement = sql`with matches as (${matchRowsSql(viewer, search, { ranked })}),
page as (
  select m.* from matches m
  order by ${pageOrder(paging, 'm')} limit ${window.size} offset ${window.offset}
),
items as (
  select p.kind, p.id, p.date, p.rank, json_build_object(
    'kind', p.kind, 'id', p.id, 'date', p.date,
    'thread_id', e.thread_id, 'conversation_id', nm.conversation_id,
    'profile_id', coalesce(nm.profile_id, st.profile_id), 'device_id', dn.device_id,
    'title', case p.kind when 'email' then e.subject when 'network-message' then coalesce(nm.subject, nc.title)
      when 'support-ticket' then st.subject else dn.title end,
    'headline', case when length(b.text) <= ${SHORT_TEXT} then ts_headline('simple', b.text, ${tsQuery}, ${WHOLE_TEXT_OPTIONS})
      else ts_headline('simple', b.text, ${tsQuery}, ${HEADLINE_OPTIONS}) end,
    'participants', case p.kind when 'email' then e.participant_emails
      when 'network-message' then array[nm."from", nm."to"] || nc.participants
      when 'support-ticket' then array(select distinct c->>'author' from jsonb_array_elements(st.comments) c)
      else '{}'::text[] end,
    'tags', ${itemTags(viewer)}
  ) as item
  from page p
  left join emails e on p.kind = 'email' and e.id = p.id
  left join network_messages nm on p.kind = 'network-message' and nm.id = p.id
  left join network_conversations nc on nc.id = nm.conversation_id
  left join support_tickets st on p.kind = 'support-ticket' and st.id = p.id
  left join device_notes dn on p.kind = 'device-note' and dn.id = p.id
  cross join lateral (select translate(left(${SNIPPET_TEXT}, 200000), ${`${HIGHLIGHT_START}${HIGHLIGHT_STOP}`}, '  ') as text) b
)
select
  (select json_agg(json_build_object('kind', k.kind, 'count', k.n) order by k.n desc, k.kind)
    from (select kind, count(*)::int as n from matches group by kind) k) as kinds,
  (select json_agg(json_build_object('tag_id', t.id, 'name', t.name, 'count', f.n) order by f.n desc, t.name_lowercase, t.id)
    from (select l.tag_id, count(*)::int as n from (${matchedTagLinks(search)}) l
      where l.tag_id = any(array${visibleTagIds(viewer)}) group by l.tag_id) f
    join tags t on t.id = f.tag_id) as tag_facets,
  (select json_agg(json_build_object('domain', d.domain, 'count', d.n) order by d.n desc, d.domain)
    from (select domain, count(*)::int as n from matches m, unnest(m.domains) as domain
      where m.kind = 'email' group by domain order by n desc, domain limit ${MAX_DOMAIN_FACETS}) d) as domains,
  (select json_agg(p.item order by ${pageOrder(paging, 'p')}) from items p) as items`;
  return statement;
}

function toSearchPage(window: PageWindow, row: SearchRow | undefined) {
  const items = (row?.items ?? []).map((item) => {
    const snippet = snippetOf(item.headline ?? '', { html: item.kind === 'device-note' });
    return {
      kind: item.kind,
      id: item.id,
      ...(item.thread_id ? { threadId: item.thread_id } : {}),
      ...(item.conversation_id ? { conversationId: item.conversation_id } : {}),
      ...(item.profile_id ? { profileId: item.profile_id } : {}),
      ...(item.device_id ? { deviceId: item.device_id } : {}),
      title: item.title,
      snippet,
      date: item.date ? new Date(item.date).toISOString() : null,
      participants: [...new Set((item.participants ?? []).filter((p): p is string => !!p?.trim()))],
      tags: (item.tags ?? []).map((t) =>
        toTagEntity({
          id: t.id,
          organizationId: t.organization_id,
          caseId: t.case_id,
          name: t.name,
          nameLowercase: t.name_lowercase,
          backgroundColor: t.background_color,
          textColor: t.text_color,
          type: t.type,
          severity: t.severity,
          origin: t.origin,
          creatorAccessType: t.creator_access_type,
          createdById: t.created_by_id,
          isActive: t.is_active,
          createdAt: new Date(t.created_at),
          updatedAt: new Date(t.updated_at),
        }),
      ),
    };
  });
  return {
    ...toPage(
      window,
      (row?.kinds ?? []).reduce((sum, k) => sum + k.count, 0),
      items,
    ),
    facets: {
      kinds: row?.kinds ?? [],
      tags: (row?.tag_facets ?? []).map((f) => ({ tagId: f.tag_id, name: f.name, count: f.count })),
      participantDomains: row?.domains ?? [],
    },
  };
}
