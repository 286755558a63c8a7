import { and, arrayOverlaps, asc, count, desc, eq, inArray, not, type SQL, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import {
  lowercased,
  type MaterialPagingQuery,
  type ThreadEmailsQuery,
  type ThreadPath,
} from '../../schemas/material/material';
import type { CaseContext } from '../cases/context';
import { db } from '../db/client';
import { attachments, emailTags, emails, emailThreads, tags } from '../db/schema';
import { idEquals, idIn } from '../ids';
import { pageWindow, sortDirection, toPage } from '../paging';
import { toTagEntity } from '../review/tag-entity';
import { ThreadNotFoundError } from './errors';

/** GET /local-emails/{caseId}/threads (extension): threads by latest activity, newest first unless sortOrder asc. */
export async function listEmailThreads(ctx: { caseContext: CaseContext }, query: z.output<typeof MaterialPagingQuery>) {
  const caseId = ctx.caseContext.case.id;
  const window = pageWindow(query);
  const direction = sortDirection(query.sortOrder, 'desc');
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(emailThreads)
      .where(eq(emailThreads.caseId, caseId))
      .orderBy(sql`${direction(emailThreads.lastMessageAt)} nulls last`, direction(emailThreads.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(emailThreads).where(eq(emailThreads.caseId, caseId)),
  ]);
  return toPage(
    window,
    totals!.total,
    rows.map((t) => ({
      id: t.id,
      subject: t.subject,
      participants: t.participants,
      messageCount: t.messageCount,
      lastMessageAt: t.lastMessageAt?.toISOString() ?? null,
      createdAt: t.createdAt.toISOString(),
      updatedAt: t.updatedAt.toISOString(),
    })),
  );
}

type ThreadEmailsInput = Pick<z.output<typeof ThreadPath>, 'threadId'> & z.output<typeof ThreadEmailsQuery>;

/**
 * GET /local-emails/{caseId}/threads/{threadId}/emails: one page of the thread's emails with
 * every filter, attachments and tags as full records. Five queries whatever the page size.
 * Overlapping filters (a domain or tag both asked for and excluded) are refused by the query schema.
 */
export async function listThreadEmails(ctx: { caseContext: CaseContext }, input: ThreadEmailsInput) {
  const [thread] = await db()
    .select({ id: emailThreads.id, caseId: emailThreads.caseId })
    .from(emailThreads)
    .where(and(idEquals(emailThreads.id, input.threadId), eq(emailThreads.caseId, ctx.caseContext.case.id)));
  if (!thread) throw new ThreadNotFoundError();

  const window = pageWindow(input);
  const where = and(...threadEmailFilters(thread, input));
  const direction = input.sortOrder === 'desc' ? desc : asc;
  const [rows, [totals]] = await Promise.all([
    db()
      .select()
      .from(emails)
      .where(where)
      .orderBy(direction(emails.date), direction(emails.threadIndex), direction(emails.id))
      .limit(window.size)
      .offset(window.offset),
    db().select({ total: count() }).from(emails).where(where),
  ]);
  const ids = rows.map((r) => r.id);
  const [files, tagged] = ids.length
    ? await Promise.all([
        db().select().from(attachments).where(inArray(attachments.emailId, ids)).orderBy(asc(attachments.name)),
        db()
          .select({ link: emailTags, tag: tags })
          .from(emailTags)
          .innerJoin(tags, eq(tags.id, emailTags.tagId))
          .where(inArray(emailTags.emailId, ids)),
      ])
    : [[], []];
  const records = rows.map((email) =>
    toEmailRecord(
      email,
      files.filter((f) => f.emailId === email.id),
      tagged.filter((t) => t.link.emailId === email.id),
    ),
  );
  return toPage(window, totals!.total, records);
}

/** The conditions an email of the thread must meet for the query's filters. */
function threadEmailFilters(thread: { id: string; caseId: string }, query: z.output<typeof ThreadEmailsQuery>): SQL[] {
  const domains = lowercased(query.domains);
  const excludeDomains = lowercased(query.excludeDomains);
  const excludeEmails = lowercased(query.excludeEmails);
  // Tag ids are UUIDs: compared lowercased, so the same id in another letter case matches.
  const tagIds = query.untagged ? [] : lowercased(query.tags);
  const excludeTagIds = lowercased(query.excludeTags);
  // A tag id that is not a UUID names no tag: `tags=abc` matches no email, `excludeTags=abc` excludes none.
  const activeTag = (ids: string[]) =>
    sql`exists (select 1 from ${emailTags} where ${emailTags.emailId} = ${emails.id} and ${emailTags.removedAt} is null${ids.length ? sql` and ${idIn(emailTags.tagId, ids)}` : sql``})`;
  const filters: SQL[] = [eq(emails.caseId, thread.caseId), eq(emails.threadId, thread.id)];
  if (query.folders?.length) filters.push(arrayOverlaps(emails.folders, query.folders));
  if (domains.length) filters.push(arrayOverlaps(emails.participantDomains, domains));
  if (excludeDomains.length) filters.push(not(arrayOverlaps(emails.participantDomains, excludeDomains)));
  if (excludeEmails.length) filters.push(not(arrayOverlaps(emails.participantEmails, excludeEmails)));
  if (query.starred !== undefined) filters.push(eq(emails.starred, query.starred));
  if (query.unread !== undefined) filters.push(eq(emails.unread, query.unread));
  if (query.untagged) filters.push(not(activeTag([])));
  else if (tagIds.length) filters.push(activeTag(tagIds));
  if (excludeTagIds.length) filters.push(not(activeTag(excludeTagIds)));
  return filters;
}

/** The EmailRecord entity: an email with its attachments and tags (current ones, and every link ever made). */
function toEmailRecord(
  email: typeof emails.$inferSelect,
  files: Array<typeof attachments.$inferSelect>,
  links: Array<{ link: typeof emailTags.$inferSelect; tag: typeof tags.$inferSelect }>,
) {
  return {
    id: email.id,
    emailDataProvider: null,
    sourceEmail: email.sourceEmail,
    body: email.body,
    date: email.date?.toISOString() ?? null,
    attachments: files.map((f) => ({
      id: f.id,
      name: f.name,
      providerId: f.providerId,
      convertedName: f.convertedName,
      convertedProviderId: f.convertedProviderId,
      provider: f.provider,
      size: f.size,
      transferState: f.transferState,
      sha256: f.sha256,
      createdAt: f.createdAt.toISOString(),
      updatedAt: f.updatedAt.toISOString(),
    })),
    bcc: email.bcc,
    cc: email.cc,
    from: email.from,
    replyTo: email.replyTo,
    to: email.to,
    folders: email.folders,
    grantId: email.grantId,
    externalId: email.externalId,
    object: email.object,
    snippet: email.snippet,
    starred: email.starred,
    unread: email.unread,
    subject: email.subject,
    threadId: email.threadId,
    threadIndex: email.threadIndex,
    tags: links.filter((l) => l.link.removedAt === null).map((l) => toTagEntity(l.tag)),
    attachedTags: links.map((l) => ({
      tagId: l.tag.id,
      tag: l.tag.name,
      addedBy: l.link.addedBy,
      addedById: l.link.addedById,
      removedAt: l.link.removedAt?.toISOString() ?? null,
      removedBy: l.link.removedBy,
      removedById: l.link.removedById,
    })),
    createdAt: email.createdAt.toISOString(),
    updatedAt: email.updatedAt.toISOString(),
  };
}
