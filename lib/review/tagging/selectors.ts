import { and, asc, count, gt, type SQL } from 'drizzle-orm';
import type { EmailTaggingFilterInput, TaggingItemKind } from '../../../schemas/review/tagging';
import type { Executor } from '../../db/client';
import { emails } from '../../db/schema';
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

/** The selector of a job's filter. Only the email filter exists yet. */
export function selectorOf(viewer: TagViewer, filter: EmailTaggingFilterInput): ItemSelector {
  return emailSelector(viewer, filter);
}
