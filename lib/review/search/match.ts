import { type SQL, sql } from 'drizzle-orm';
import { tags } from '../../db/schema/review';
import { textArray } from '../../db/text-array';
import { InvalidInputError } from '../../errors';
import { isUuid, matchableIds } from '../../ids';
import { type TagViewer, usableTag } from '../tag-visibility';
import { type ParsedSearchQuery, parseSearchQuery } from './parse-query';

/** What the case search finds, as its results name them. */
export const SEARCH_KINDS = ['email', 'network-message', 'support-ticket', 'device-note'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** A case search, validated: what GET /cases/{caseId}/search and a tagging job by search run. */
export interface CaseSearch {
  query: ParsedSearchQuery;
  /** The kinds searched; all four when none were asked for. */
  kinds: readonly SearchKind[];
  from?: Date;
  to?: Date;
  /** Addresses or names, trimmed and lowercased: an item matches when any participant equals one. */
  participants: string[];
  /** Tag ids the item must all carry (active links, tags the viewer sees). */
  tags: string[];
  /** Tag ids the item must carry none of. */
  excludeTags: string[];
  /** Only items carrying no tag the viewer sees; takes precedence over `tags`. */
  untagged: boolean;
}

/** The fields of a case search as a request sends them (query parameters or a tagging filter). */
export interface CaseSearchInput {
  q: string;
  kinds?: readonly SearchKind[];
  from?: string | Date;
  to?: string | Date;
  participants?: readonly string[];
  tags?: readonly string[];
  excludeTags?: readonly string[];
  untagged?: boolean;
}

/** A search that passed its schema but finds nothing by construction: 400 naming `q` or `from`. */
export class CaseSearchQueryError extends InvalidInputError {
  constructor(field: 'q' | 'from', message: string) {
    super([{ field, message }]);
  }
}

/** A CaseSearch from validated request fields; a `q` with nothing to find or `from` after `to` throws CaseSearchQueryError. */
export function toCaseSearch(input: CaseSearchInput): CaseSearch {
  const parsed = parseSearchQuery(input.q);
  if (!parsed.ok) throw new CaseSearchQueryError('q', parsed.message);
  const from = input.from === undefined ? undefined : new Date(input.from);
  const to = input.to === undefined ? undefined : new Date(input.to);
  if (from && to && from > to) throw new CaseSearchQueryError('from', 'from is after to');
  const lower = (values: readonly string[] | undefined) => [
    ...new Set((values ?? []).map((v) => v.trim().toLowerCase()).filter(Boolean)),
  ];
  return {
    query: parsed.query,
    kinds: input.kinds?.length ? [...new Set(input.kinds)] : SEARCH_KINDS,
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    participants: lower(input.participants),
    tags: lower(input.tags),
    excludeTags: lower(input.excludeTags),
    untagged: input.untagged ?? false,
  };
}

/** Who searches: the case, the side (opposing counsel's sees less evidence and only its own tags) and the user (their user tags). */
export type SearchViewer = TagViewer;

/** The tsquery of a search, as an SQL expression (its text is a parameter). */
export const searchTsQuery = (search: CaseSearch): SQL => sql`to_tsquery('simple', ${search.query.tsquery})`;

/** Ids of the tags the viewer sees and that are active: the only tags that filter, show or count. */
export const visibleTagIds = (viewer: SearchViewer): SQL =>
  sql`(select ${tags.id} from ${tags} where ${usableTag(viewer)})`;

interface KindTable {
  kind: SearchKind;
  /** The table, aliased `x`. */
  from: SQL;
  date: SQL;
  /** The id tags hang on (a network message carries its conversation's tags). */
  tagged: SQL;
  link: { table: string; item: string };
  domains: SQL;
  participantMatch: (values: SQL) => SQL;
  opposing: (caseId: string) => SQL;
}

const visibleProfile = (caseId: string) =>
  sql`x.profile_id in (select id from material_profiles where case_id = ${caseId} and visible_to_opposing_counsel)`;

const KIND_TABLES: Record<SearchKind, KindTable> = {
  email: {
    kind: 'email',
    from: sql`emails x`,
    date: sql`x.date`,
    tagged: sql`x.id`,
    link: { table: 'email_tags', item: 'email_id' },
    domains: sql`x.participant_domains`,
    participantMatch: (values) =>
      sql`(x.participant_emails && ${values} or exists (select 1 from jsonb_array_elements(x."from" || x."to" || x.cc || x.bcc) a where lower(trim(a->>'name')) = any(${values})))`,
    // Opposing counsel see every email of the case.
    opposing: () => sql`true`,
  },
  'network-message': {
    kind: 'network-message',
    from: sql`network_messages x`,
    date: sql`x.date`,
    tagged: sql`x.conversation_id`,
    link: { table: 'network_conversation_tags', item: 'conversation_id' },
    domains: sql`null::text[]`,
    participantMatch: (values) =>
      sql`(lower(trim(x."from")) = any(${values}) or lower(trim(x."to")) = any(${values}) or exists (select 1 from network_conversations c, unnest(c.participants) p where c.id = x.conversation_id and lower(trim(p)) = any(${values})))`,
    opposing: visibleProfile,
  },
  'support-ticket': {
    kind: 'support-ticket',
    from: sql`support_tickets x`,
    date: sql`x.ticket_created_at`,
    tagged: sql`x.id`,
    link: { table: 'support_ticket_tags', item: 'ticket_id' },
    domains: sql`null::text[]`,
    participantMatch: (values) =>
      sql`exists (select 1 from jsonb_array_elements(x.comments) c where lower(trim(c->>'author')) = any(${values}))`,
    opposing: visibleProfile,
  },
  'device-note': {
    kind: 'device-note',
    from: sql`device_notes x`,
    // The device's own times are free text from the extractor; the import time is the one sure time.
    date: sql`x.created_at`,
    tagged: sql`x.id`,
    link: { table: 'device_note_tags', item: 'note_id' },
    domains: sql`null::text[]`,
    // Notes have no participants: a search naming participants finds none.
    participantMatch: () => sql`false`,
    // Opposing counsel have no read of device notes.
    opposing: () => sql`false`,
  },
};

/** The link table of a kind, for the tag conditions, facets and result tags. */
export const linkOf = (kind: SearchKind) => KIND_TABLES[kind].link;

/** Whether the item (`tagged`) carries an active link to a tag the viewer sees, among `ids` when given. */
function carries(kind: KindTable, viewer: SearchViewer, ids?: string[]): SQL {
  const { table, item } = kind.link;
  return sql`exists (select 1 from ${sql.raw(table)} l where l.${sql.raw(item)} = ${kind.tagged} and l.removed_at is null and l.tag_id in ${visibleTagIds(viewer)}${ids ? sql` and l.tag_id = any(${sql`${`{${ids.join(',')}}`}::uuid[]`})` : sql``})`;
}

/** The conditions of one kind's rows beyond the text match. */
function kindConditions(kind: KindTable, viewer: SearchViewer, search: CaseSearch): SQL[] {
  const conditions: SQL[] = [];
  if (viewer.side === 'opposing_council') conditions.push(kind.opposing(viewer.caseId));
  if (search.from) conditions.push(sql`${kind.date} >= ${search.from.toISOString()}::timestamptz`);
  if (search.to) conditions.push(sql`${kind.date} <= ${search.to.toISOString()}::timestamptz`);
  if (search.participants.length) conditions.push(kind.participantMatch(textArray(search.participants)));
  if (search.untagged) conditions.push(sql`not ${carries(kind, viewer)}`);
  else if (search.tags.length) {
    // Every tag asked for must be on the item: an id that is no UUID (or a tag the viewer does not
    // see) is on no item, so the search then finds nothing.
    if (search.tags.some((id) => !isUuid(id))) conditions.push(sql`false`);
    else for (const id of matchableIds(search.tags)) conditions.push(carries(kind, viewer, [id]));
  }
  const excluded = matchableIds(search.excludeTags);
  if (excluded.length) conditions.push(sql`not ${carries(kind, viewer, excluded)}`);
  return conditions;
}

/** The kinds a viewer may search: opposing counsel have no read of device notes. */
export const searchableKinds = (viewer: SearchViewer, search: CaseSearch): SearchKind[] =>
  search.kinds.filter((k) => !(k === 'device-note' && viewer.side === 'opposing_council'));

/**
 * Every match of a search, one row each: `kind`, `id`, `date`, `rank` (ts_rank, 0 unless
 * `ranked`), `tagged_id` (what its tags hang on) and `domains` (an email's participant domains,
 * else null). Each kind's rows come from its
 * GIN index on `search` and its case; a UNION ALL of the kinds asked for.
 */
export function matchRowsSql(viewer: SearchViewer, search: CaseSearch, options: { ranked: boolean }): SQL {
  const tsQuery = searchTsQuery(search);
  const kinds = searchableKinds(viewer, search);
  if (!kinds.length)
    return sql`select null::text as kind, null::uuid as id, null::timestamptz as date, 0::real as rank, null::uuid as tagged_id, null::text[] as domains where false`;
  const branches = kinds.map((name) => {
    const kind = KIND_TABLES[name];
    const conditions = [
      sql`x.case_id = ${viewer.caseId}`,
      sql`x.search @@ ${tsQuery}`,
      ...kindConditions(kind, viewer, search),
    ];
    return sql`select ${name}::text as kind, x.id as id, ${kind.date} as date, ${options.ranked ? sql`ts_rank(x.search, ${tsQuery})` : sql`0::real`} as rank, ${kind.tagged} as tagged_id, ${kind.domains} as domains from ${kind.from} where ${sql.join(conditions, sql` and `)}`;
  });
  return sql.join(branches, sql` union all `);
}

/**
 * The SQL selecting `(kind, id)` of every item a search matches for a viewer: `kind` is a search
 * kind (email, network-message, support-ticket, device-note), `id` the item's id. What the viewer
 * may not see is never in it. Use as a subquery: `... in (select id from (${searchMatchSql(v, s)}) m where kind = 'email')`.
 */
export function searchMatchSql(viewer: SearchViewer, search: CaseSearch): SQL {
  return sql`select m.kind, m.id from (${matchRowsSql(viewer, search, { ranked: false })}) m`;
}

/**
 * The SQL selecting `(kind, id)` of every taggable item a search matches, in the tagging kinds:
 * `email`, `network-conversation` (each matched message's conversation, once), `support-ticket`,
 * `device-note`. For "tag everything this search finds" (POST /cases/{caseId}/tagging with a search).
 */
export function searchTaggableItemsSql(viewer: SearchViewer, search: CaseSearch): SQL {
  return sql`select distinct case m.kind when 'network-message' then 'network-conversation' else m.kind end as kind, m.tagged_id as id from (${matchRowsSql(viewer, search, { ranked: false })}) m`;
}
