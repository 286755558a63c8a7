import { and, arrayOverlaps, asc, count, desc, eq, inArray, not, type SQL, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { attachments, emailTags, emails, emailThreads, tags } from '../db/schema';
import { NotFoundError, ValidationFailedError } from '../http/errors';
import { idEquals, idIn } from '../ids';
import { pageWindow, type PagingInput, sortDirection, toPage } from '../paging';
import { materialAccess } from './access';

type TagRow = typeof tags.$inferSelect;

export function toTagEntity(tag: TagRow) {
  return {
    id: tag.id,
    name: tag.name,
    nameLowercase: tag.nameLowercase,
    backgroundColor: tag.backgroundColor,
    textColor: tag.textColor,
    type: tag.type,
    severity: tag.severity,
    origin: tag.origin,
    creatorAccessType: tag.creatorAccessType,
    isActive: tag.isActive,
    createdAt: tag.createdAt.toISOString(),
    updatedAt: tag.updatedAt.toISOString(),
  };
}

/** GET /local-emails/{caseId}/threads (extension): threads by latest activity, newest first unless sortOrder asc. */
export async function listThreads(caseId: string, userId: string, query: PagingInput) {
  await materialAccess(caseId, userId);
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

export interface ThreadEmailsQuery extends PagingInput {
  sortOrder?: 'asc' | 'desc';
  folders?: string[];
  domains?: string[];
  excludeDomains?: string[];
  tags?: string[];
  excludeTags?: string[];
  excludeEmails?: string[];
  starred?: boolean;
  unread?: boolean;
  untagged?: boolean;
}

const lower = (values: string[] | undefined) => (values ?? []).map((v) => v.trim().toLowerCase()).filter(Boolean);

/**
 * GET /local-emails/{caseId}/threads/{threadId}/emails: one page of the thread's emails with
 * every filter, attachments and tags as full records. Five queries whatever the page size.
 */
export async function threadEmails(caseId: string, threadId: string, userId: string, query: ThreadEmailsQuery) {
  const domains = lower(query.domains);
  const excludeDomains = lower(query.excludeDomains);
  const overlapDomains = domains.filter((d) => excludeDomains.includes(d));
  if (overlapDomains.length) {
    throw new ValidationFailedError([
      { path: 'query.excludeDomains', message: `domains and excludeDomains overlap: ${overlapDomains.join(', ')}` },
    ]);
  }
  // Tag ids are UUIDs: compared lowercased, so the same id in another letter case still overlaps.
  const tagIds = query.untagged ? [] : lower(query.tags);
  const excludeTagIds = lower(query.excludeTags);
  const overlapTags = lower(query.tags).filter((t) => excludeTagIds.includes(t));
  if (overlapTags.length) {
    throw new ValidationFailedError([
      { path: 'query.excludeTags', message: `tags and excludeTags overlap: ${overlapTags.join(', ')}` },
    ]);
  }

  await materialAccess(caseId, userId);
  const [thread] = await db()
    .select({ id: emailThreads.id, caseId: emailThreads.caseId })
    .from(emailThreads)
    .where(and(idEquals(emailThreads.id, threadId), idEquals(emailThreads.caseId, caseId)));
  if (!thread) throw new NotFoundError('Unknown thread');

  // A tag id that is not a UUID names no tag: `tags=abc` matches no email, `excludeTags=abc` excludes none.
  const activeTag = (ids: string[]) =>
    sql`exists (select 1 from ${emailTags} where ${emailTags.emailId} = ${emails.id} and ${emailTags.removedAt} is null${ids.length ? sql` and ${idIn(emailTags.tagId, ids)}` : sql``})`;
  const filters: SQL[] = [eq(emails.caseId, thread.caseId), eq(emails.threadId, thread.id)];
  if (query.folders?.length) filters.push(arrayOverlaps(emails.folders, query.folders));
  if (domains.length) filters.push(arrayOverlaps(emails.participantDomains, domains));
  if (excludeDomains.length) filters.push(not(arrayOverlaps(emails.participantDomains, excludeDomains)));
  const excludeEmails = lower(query.excludeEmails);
  if (excludeEmails.length) filters.push(not(arrayOverlaps(emails.participantEmails, excludeEmails)));
  if (query.starred !== undefined) filters.push(eq(emails.starred, query.starred));
  if (query.unread !== undefined) filters.push(eq(emails.unread, query.unread));
  if (query.untagged) filters.push(not(activeTag([])));
  else if (tagIds.length) filters.push(activeTag(tagIds));
  if (excludeTagIds.length) filters.push(not(activeTag(excludeTagIds)));

  const window = pageWindow(query);
  const where = and(...filters);
  const direction = query.sortOrder === 'desc' ? desc : asc;
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

  const records = rows.map((email) => {
    const links = tagged.filter((t) => t.link.emailId === email.id);
    return {
      id: email.id,
      emailDataProvider: null,
      sourceEmail: email.sourceEmail,
      body: email.body,
      date: email.date?.toISOString() ?? null,
      attachments: files
        .filter((f) => f.emailId === email.id)
        .map((f) => ({
          id: f.id,
          name: f.name,
          providerId: f.providerId,
          convertedName: f.convertedName,
          convertedProviderId: f.convertedProviderId,
          provider: f.provider,
          size: f.size,
          transferState: f.transferState,
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
  });
  return toPage(window, totals!.total, records);
}
