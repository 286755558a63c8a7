import { and, asc, count, desc, eq, getTableColumns, inArray, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { MaterialPagingQuery, ThreadEmailsQuery, ThreadPath } from '../../schemas/material/material';
import type { CaseContext } from '../cases/context';
import { db } from '../db/client';
import { attachments, emails, emailThreads } from '../db/schema/material';
import { emailTags, tags } from '../db/schema/review';
import { idEquals } from '../ids';
import { pageWindow, sortDirection, toPage } from '../paging';
import { toTagEntity } from '../review/tag-entity';
import { caseEmailsWhere } from '../review/tagging/email-filter';
import { tagViewerOf, visibleTag } from '../review/tag-visibility';
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

// Every column but `search` (the case search's tsvector, large and never shown).
const { search: _search, ...emailColumns } = getTableColumns(emails);

/**
 * GET /local-emails/{caseId}/threads/{threadId}/emails: one page of the thread's emails with
 * every filter, attachments and tags as full records. Five queries whatever the page size.
 * Overlapping filters (a domain or tag both asked for and excluded) are refused by the query schema.
 * Tags show, and tag filters count, only tags the caller may see (their side's and system tags).
 */
export async function listThreadEmails(ctx: { caseContext: CaseContext; userId: string }, input: ThreadEmailsInput) {
  const viewer = tagViewerOf(ctx.caseContext, ctx.userId);
  const [thread] = await db()
    .select({ id: emailThreads.id, caseId: emailThreads.caseId })
    .from(emailThreads)
    .where(and(idEquals(emailThreads.id, input.threadId), eq(emailThreads.caseId, ctx.caseContext.case.id)));
  if (!thread) throw new ThreadNotFoundError();

  const window = pageWindow(input);
  const where = caseEmailsWhere(viewer, thread.caseId, thread.id, input);
  const direction = input.sortOrder === 'desc' ? desc : asc;
  const [rows, [totals]] = await Promise.all([
    db()
      .select(emailColumns)
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
          .where(and(inArray(emailTags.emailId, ids), visibleTag(viewer))),
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

/** The EmailRecord entity: an email with its attachments and tags (current ones, and every link ever made). */
function toEmailRecord(
  email: Omit<typeof emails.$inferSelect, 'search'>,
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
    // Current tags: active links to tags not deleted. attachedTags keeps every link, of deleted tags too.
    tags: links.filter((l) => l.link.removedAt === null && l.tag.isActive).map((l) => toTagEntity(l.tag)),
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
