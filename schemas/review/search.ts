import * as z from 'zod/mini';
import { parseSearchQuery } from '../../lib/review/search/parse-query';
import { SEARCH_KINDS } from '../../lib/review/search/match';
import { DateTime, Id, IdText, QueryBoolean } from '../common/fields';
import { PageEntity, PagingQuery, QueryList } from '../common/paging';
import { overlap, TagEntity } from '../material/material';

/** A search's text: 1 to 200 characters with at least one word, "phrase" or prefix* to find. */
export const SearchText = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(200),
    z.superRefine((q, ctx) => {
      const parsed = parseSearchQuery(q);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message, input: q });
    }),
  )
  .register(z.globalRegistry, {
    description:
      'Words (each must match a whole word), "quoted phrases" (the words adjacent, in order), -excluded words or phrases (must not match) and prefix* (a word start), all AND-ed, case-insensitive. At least one word, phrase or prefix to find: a query of exclusions only is 400.',
  });

const SearchKind = z.enum(SEARCH_KINDS);
const QueryDateTime = z.iso.datetime({ offset: true });

/**
 * A search that contradicts itself, refused naming the field: `from` after `to`, a tag both asked
 * for and excluded (the same id in any letter case). The query string and a tagging job's search
 * filter check it alike.
 */
export function refuseContradictorySearch(
  search: { from?: string; to?: string; tags?: string[]; excludeTags?: string[] },
  ctx: z.core.$RefinementCtx,
): void {
  if (search.from && search.to && new Date(search.from) > new Date(search.to))
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'from is after to', input: search.from });
  const both = overlap(search.tags, search.excludeTags);
  if (both.length)
    ctx.addIssue({
      code: 'custom',
      path: ['excludeTags'],
      message: `tags and excludeTags overlap: ${both.join(', ')}`,
      input: search.excludeTags,
    });
}

export const CaseSearchQuery = z
  .object({
    ...PagingQuery,
    q: SearchText,
    kinds: z.optional(QueryList(SearchKind, SEARCH_KINDS.length * 2)),
    from: z.optional(QueryDateTime),
    to: z.optional(QueryDateTime),
    participants: z.optional(QueryList(z.string().check(z.minLength(1), z.maxLength(254)), 50)),
    tags: z.optional(QueryList(IdText)),
    excludeTags: z.optional(QueryList(IdText)),
    untagged: z.optional(QueryBoolean),
    sortBy: z.optional(z.enum(['relevance', 'date'])),
  })
  .check(z.superRefine(refuseContradictorySearch));

export const SearchResultEntity = z
  .object({
    kind: SearchKind,
    id: Id,
    threadId: z.optional(Id),
    conversationId: z.optional(Id),
    profileId: z.optional(Id),
    deviceId: z.optional(Id),
    /** Subject (email, network message, support ticket) or title (network conversation, device note). */
    title: z.nullable(z.string()),
    snippet: z.object({
      text: z.string(),
      /** Character ranges of `text` (UTF-16 code units, as JavaScript's String slice counts) the query matched. */
      highlights: z.array(z.object({ start: z.number(), end: z.number() })),
    }),
    date: z.nullable(DateTime),
    participants: z.array(z.string()),
    tags: z.array(TagEntity),
  })
  .register(z.globalRegistry, { id: 'CaseSearchResultEntity' });

export const CaseSearchFacets = z
  .object({
    kinds: z.array(z.object({ kind: SearchKind, count: z.number() })),
    tags: z.array(z.object({ tagId: Id, name: z.string(), count: z.number() })),
    participantDomains: z.array(z.object({ domain: z.string(), count: z.number() })),
  })
  .register(z.globalRegistry, { id: 'CaseSearchFacets' });

export const CaseSearchPageEntity = z
  .extend(PageEntity(SearchResultEntity), { facets: CaseSearchFacets })
  .register(z.globalRegistry, { id: 'CaseSearchPageEntity' });
