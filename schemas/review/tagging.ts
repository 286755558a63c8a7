import * as z from 'zod/mini';
import { SEARCH_KINDS } from '../../lib/review/search/match';
import { DateTime, Id, IdText } from '../common/fields';
import { overlap, refuseOverlappingFilters } from '../material/material';
import { refuseContradictorySearch, SearchText } from './search';

/** What can carry a tag: the contract's evidence kinds. */
export const TAGGING_ITEM_KINDS = ['email', 'network-conversation', 'support-ticket', 'device-note'] as const;
export type TaggingItemKind = (typeof TAGGING_ITEM_KINDS)[number];

/** Most items one request tags by `items` (all or nothing, in one transaction); more go by `filter`. */
export const MAX_TAGGING_ITEMS = 1000;
/** Most tags one request adds or removes. */
export const MAX_TAGGING_TAGS = 100;

/** Postgres text cannot hold NUL: refused as bad input, never a 500. */
const Text = (min: number, max: number) =>
  z.string().check(
    z.trim(),
    z.minLength(min),
    z.maxLength(max),
    z.refine((value) => !value.includes('\u0000'), 'must not contain NUL'),
  );

const TagIds = z.array(IdText).check(z.minLength(1), z.maxLength(MAX_TAGGING_TAGS));
const List = <T extends z.ZodMiniType>(item: T) => z.array(item).check(z.maxLength(100));

export const TaggingItem = z.object({ kind: z.enum(TAGGING_ITEM_KINDS), id: IdText });

/**
 * The thread email filters (GET /local-emails/{caseId}/threads/{threadId}/emails) over the whole
 * case, or one thread with `threadId`. Lists are JSON arrays here, not comma-separated text.
 */
export const EmailTaggingFilter = z
  .object({
    kind: z.literal('email'),
    threadId: z.optional(IdText),
    folders: z.optional(List(Text(1, 200))),
    domains: z.optional(List(Text(1, 253))),
    excludeDomains: z.optional(List(Text(1, 253))),
    tags: z.optional(List(IdText)),
    excludeTags: z.optional(List(IdText)),
    excludeEmails: z.optional(List(Text(3, 254))),
    starred: z.optional(z.boolean()),
    unread: z.optional(z.boolean()),
    untagged: z.optional(z.boolean()),
  })
  .check(z.superRefine(refuseOverlappingFilters))
  .register(z.globalRegistry, { id: 'EmailTaggingFilter' });

export type EmailTaggingFilterInput = z.output<typeof EmailTaggingFilter>;

/**
 * The case search (GET /cases/{caseId}/search) as a filter: everything it matches for the caller,
 * in the tagging kinds (a matched network message tags its conversation). Lists are JSON arrays.
 */
export const SearchTaggingFilter = z
  .object({
    kind: z.literal('search'),
    q: SearchText,
    kinds: z.optional(z.array(z.enum(SEARCH_KINDS)).check(z.maxLength(SEARCH_KINDS.length * 2))),
    from: z.optional(z.iso.datetime({ offset: true })),
    to: z.optional(z.iso.datetime({ offset: true })),
    participants: z.optional(List(Text(1, 254))),
    tags: z.optional(List(IdText)),
    excludeTags: z.optional(List(IdText)),
    untagged: z.optional(z.boolean()),
  })
  .check(z.superRefine(refuseContradictorySearch))
  .register(z.globalRegistry, { id: 'SearchTaggingFilter' });

export type SearchTaggingFilterInput = z.output<typeof SearchTaggingFilter>;

/** What a tagging job runs over: the thread email filters (`kind: email`) or a case search (`kind: search`). */
export const TaggingFilter = z.discriminatedUnion('kind', [EmailTaggingFilter, SearchTaggingFilter]);
export type TaggingFilterInput = z.output<typeof TaggingFilter>;

/** A job's filter as stored and answered (the request's, values trimmed, the thread id as stored). */
export const EmailTaggingFilterEntity = z
  .object({
    kind: z.literal('email'),
    threadId: z.optional(z.string()),
    folders: z.optional(z.array(z.string())),
    domains: z.optional(z.array(z.string())),
    excludeDomains: z.optional(z.array(z.string())),
    tags: z.optional(z.array(z.string())),
    excludeTags: z.optional(z.array(z.string())),
    excludeEmails: z.optional(z.array(z.string())),
    starred: z.optional(z.boolean()),
    unread: z.optional(z.boolean()),
    untagged: z.optional(z.boolean()),
  })
  .register(z.globalRegistry, { id: 'EmailTaggingFilterEntity' });

/** A search job's filter as stored and answered. */
export const SearchTaggingFilterEntity = z
  .object({
    kind: z.literal('search'),
    q: z.string(),
    kinds: z.optional(z.array(z.enum(SEARCH_KINDS))),
    from: z.optional(z.string()),
    to: z.optional(z.string()),
    participants: z.optional(z.array(z.string())),
    tags: z.optional(z.array(z.string())),
    excludeTags: z.optional(z.array(z.string())),
    untagged: z.optional(z.boolean()),
  })
  .register(z.globalRegistry, { id: 'SearchTaggingFilterEntity' });

/**
 * POST /cases/{caseId}/tagging: tags to add and to remove (each list, when sent, not empty), on
 * `items` (1 to 1,000, all or nothing) or on what `filter` matches (a background job). Exactly one
 * of `items` and `filter`, and at least one of `add` and `remove`: checked by tagEvidence (400
 * naming the field), as these rules span fields the description lists as optional.
 */
export const TagEvidenceDto = z
  .object({
    add: z.optional(TagIds),
    remove: z.optional(TagIds),
    items: z.optional(z.array(TaggingItem).check(z.minLength(1), z.maxLength(MAX_TAGGING_ITEMS))),
    filter: z.optional(TaggingFilter),
  })
  .check(
    z.superRefine((body, ctx) => {
      const both = overlap(body.add, body.remove);
      if (both.length)
        ctx.addIssue({ code: 'custom', path: ['remove'], message: `add and remove overlap: ${both.join(', ')}` });
    }),
  )
  .register(z.globalRegistry, { id: 'TagEvidenceDto' });

export type TagEvidenceInput = z.output<typeof TagEvidenceDto>;

/** The answer of a tagging by items: how many items, and how many links were added and removed. */
export const TaggingResultEntity = z
  .object({ items: z.number(), added: z.number(), removed: z.number() })
  .register(z.globalRegistry, { id: 'TaggingResultEntity' });

export const TaggingJobEntity = z
  .object({
    id: Id,
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    /** Items the filter matched, known once the job starts running. */
    totalItems: z.nullable(z.number()),
    processedItems: z.number(),
    addedLinks: z.number(),
    removedLinks: z.number(),
    error: z.nullable(z.string()),
    add: z.array(Id),
    remove: z.array(Id),
    filter: z.discriminatedUnion('kind', [EmailTaggingFilterEntity, SearchTaggingFilterEntity]),
    createdAt: DateTime,
    startedAt: z.nullable(DateTime),
    finishedAt: z.nullable(DateTime),
  })
  .register(z.globalRegistry, { id: 'TaggingJobEntity' });

/** What POST /cases/{caseId}/tagging answers (202 either way): the counts of a tagging by items, or the job of one by filter. */
export const TagEvidenceAnswer = z.union([TaggingResultEntity, TaggingJobEntity]);

export const TaggingJobPath = z.object({ caseId: IdText, jobId: IdText });
