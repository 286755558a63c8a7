import { and, asc, count, gt, type SQL, sql } from 'drizzle-orm';
import {
  type EmailTaggingFilterInput,
  type SearchTaggingFilterInput,
  TAGGING_ITEM_KINDS,
  type TaggingFilterInput,
  type TaggingItemKind,
} from '../../../schemas/review/tagging';
import type { Executor } from '../../db/client';
import { rawRows } from '../../db/raw-rows';
import { emails } from '../../db/schema/material';
import { searchTaggableItemsSql, toCaseSearch } from '../search/match';
import type { TagViewer } from '../tag-visibility';
import { caseEmailsWhere } from './email-filter';

/** A batch of items a filter matched, and the keyset position after it (null: none after it). */
export interface SelectedBatch {
  kind: TaggingItemKind;
  ids: string[];
  cursor: string | null;
}

/**
 * What a tagging job runs over: the items a filter matches, counted once and then read in batches
 * in a stable keyset order from a cursor kept as text, so a job taken up again resumes after its
 * last committed batch. The email filter is one; the case search (`{ search }`) plugs in as
 * another selector yielding (kind, id) batches of each kind it matches.
 */
export interface ItemSelector {
  count(executor: Executor): Promise<number>;
  next(executor: Executor, cursor: string | null, limit: number): Promise<SelectedBatch>;
}

/** The emails of the case (or one thread) that the thread email filters match, by id. */
export function emailSelector(
  viewer: TagViewer,
  filter: EmailTaggingFilterInput & { threadId?: string },
): ItemSelector {
  const where = (extra?: SQL) => and(caseEmailsWhere(viewer, viewer.caseId, filter.threadId ?? null, filter), extra);
  return {
    async count(executor) {
      const [row] = await executor.select({ total: count() }).from(emails).where(where());
      return row!.total;
    },
    async next(executor, cursor, limit) {
      const rows = await executor
        .select({ id: emails.id })
        .from(emails)
        .where(where(cursor ? gt(emails.id, cursor) : undefined))
        .orderBy(asc(emails.id))
        .limit(limit);
      const ids = rows.map((row) => row.id);
      return { kind: 'email', ids, cursor: ids.length === limit ? ids.at(-1)! : null };
    },
  };
}

/** The kinds in the order a search job walks them: its cursor is `<kind>:<id>`. */
const kindOrder = sql.raw(
  `array_position(array[${TAGGING_ITEM_KINDS.map((k) => `'${k}'`).join(', ')}]::text[], t.kind)`,
);

/**
 * Every item the case search matches for the job's viewer (lib/review/search), in the tagging
 * kinds (a matched network message stands for its conversation, once), walked kind by kind in id
 * order. Each batch holds one kind: it ends where the next kind starts. The search runs again for
 * each batch and resumes after the cursor, so what a batch tags (for `untagged`, say) never makes
 * an item come back.
 */
export function searchSelector(viewer: TagViewer, filter: SearchTaggingFilterInput): ItemSelector {
  const search = toCaseSearch(filter);
  const items = searchTaggableItemsSql(viewer, search);
  return {
    async count(executor) {
      const [row] = await rawRows<{ total: number }>(executor, sql`select count(*)::int as total from (${items}) t`);
      return row!.total;
    },
    async next(executor, cursor, limit) {
      const [afterKind, afterId] = cursor ? (cursor.split(':') as [TaggingItemKind, string]) : [null, null];
      const after = afterKind
        ? sql`where (${kindOrder}, t.id) > (${TAGGING_ITEM_KINDS.indexOf(afterKind) + 1}, ${afterId}::uuid)`
        : sql``;
      const rows = await rawRows<{ kind: TaggingItemKind; id: string }>(
        executor,
        sql`select t.kind, t.id from (${items}) t ${after} order by ${kindOrder}, t.id limit ${limit}`,
      );
      if (!rows.length) return { kind: 'email', ids: [], cursor: null };
      const kind = rows[0]!.kind;
      const ids = rows.filter((row) => row.kind === kind).map((row) => row.id);
      // A full page, or one cut where the next kind starts: more may follow.
      const more = rows.length === limit || ids.length < rows.length;
      return { kind, ids, cursor: more ? `${kind}:${ids.at(-1)!}` : null };
    },
  };
}

/** The selector of a job's filter: the thread email filters, or the case search. */
export function selectorOf(viewer: TagViewer, filter: TaggingFilterInput): ItemSelector {
  return filter.kind === 'search' ? searchSelector(viewer, filter) : emailSelector(viewer, filter);
}
