import { and, arrayOverlaps, eq, not, type SQL, sql } from 'drizzle-orm';
import { emails } from '../../db/schema/material';
import { emailTags, tags } from '../../db/schema/review';
import { textArray } from '../../db/text-array';
import { idIn } from '../../ids';
import { type TagViewer, usableTag } from '../tag-visibility';

/** The thread email filters, as the query (comma lists split) or a tagging job's filter gives them. */
export interface EmailFilterValues {
  folders?: string[] | undefined;
  domains?: string[] | undefined;
  excludeDomains?: string[] | undefined;
  tags?: string[] | undefined;
  excludeTags?: string[] | undefined;
  excludeEmails?: string[] | undefined;
  starred?: boolean | undefined;
  unread?: boolean | undefined;
  untagged?: boolean | undefined;
}

const lowercased = (values: string[] | undefined) => (values ?? []).map((v) => v.trim().toLowerCase()).filter(Boolean);

/**
 * Whether the email carries an active link to a tag the viewer may see and that is not deleted (of
 * `ids` when given). Links to tags of the other side, and to deleted (inactive) tags, count for
 * nothing: such a tag matches nothing in `tags`, excludes nothing in `excludeTags`, and does not
 * make an email tagged for `untagged`.
 */
export function visiblyTagged(viewer: TagViewer, ids: string[] | null): SQL {
  // A scalar subquery, not EXISTS: the planner would turn EXISTS into a semi join hashing every
  // active link of the tag (100,000 for a tag on a tenth of a million-email case) to count a
  // 5,000-email thread; this probes the link index once per email of the thread instead.
  return sql`(select 1 from ${emailTags} inner join ${tags} on ${tags.id} = ${emailTags.tagId} where ${emailTags.emailId} = ${emails.id} and ${emailTags.removedAt} is null${ids ? sql` and ${idIn(emailTags.tagId, ids)}` : sql``} and ${usableTag(viewer)} limit 1) is not null`;
}

/**
 * The `domains` filter. Within one thread it is written so that the planner cannot use the GIN
 * index on `participant_domains`: that index covers the whole table, and at 10,000,000 items the
 * planner combined it with the thread's index, 582 ms to count a 5,000-email thread where reading
 * the thread's rows and checking each takes 22 ms (test/bench/README.md, "Scale curve"). Across a
 * whole case (a tagging job without a thread) the index is what helps.
 */
function domainsOverlap(domains: string[], withinThread: boolean): SQL {
  return withinThread
    ? sql`(${emails.participantDomains} || '{}'::text[]) && ${textArray(domains)}`
    : arrayOverlaps(emails.participantDomains, domains);
}

/**
 * The conditions of the thread email filters on `emails`, beyond its case and thread: the thread
 * email route and the tagging jobs by filter read emails through these. Tag filters count only
 * active links of tags the viewer may see.
 */
export function emailFilterConditions(viewer: TagViewer, filter: EmailFilterValues, withinThread = false): SQL[] {
  const domains = lowercased(filter.domains);
  const excludeDomains = lowercased(filter.excludeDomains);
  const excludeEmails = lowercased(filter.excludeEmails);
  // Tag ids are UUIDs: compared lowercased, so the same id in another letter case matches. One
  // that is not a UUID names no tag: `tags=abc` matches no email, `excludeTags=abc` excludes none.
  const tagIds = filter.untagged ? [] : lowercased(filter.tags);
  const excludeTagIds = lowercased(filter.excludeTags);
  const conditions: SQL[] = [];
  if (filter.folders?.length) conditions.push(arrayOverlaps(emails.folders, filter.folders));
  if (domains.length) conditions.push(domainsOverlap(domains, withinThread));
  if (excludeDomains.length) conditions.push(not(arrayOverlaps(emails.participantDomains, excludeDomains)));
  if (excludeEmails.length) conditions.push(not(arrayOverlaps(emails.participantEmails, excludeEmails)));
  if (filter.starred !== undefined) conditions.push(eq(emails.starred, filter.starred));
  if (filter.unread !== undefined) conditions.push(eq(emails.unread, filter.unread));
  if (filter.untagged) conditions.push(not(visiblyTagged(viewer, null)));
  else if (tagIds.length) conditions.push(visiblyTagged(viewer, tagIds));
  if (excludeTagIds.length) conditions.push(not(visiblyTagged(viewer, excludeTagIds)));
  return conditions;
}

/** The emails of a case (one thread of it when `threadId`) the filter matches. */
export function caseEmailsWhere(
  viewer: TagViewer,
  caseId: string,
  threadId: string | null,
  filter: EmailFilterValues,
): SQL {
  return and(
    eq(emails.caseId, caseId),
    threadId ? eq(emails.threadId, threadId) : undefined,
    ...emailFilterConditions(viewer, filter, threadId !== null),
  )!;
}
