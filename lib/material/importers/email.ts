import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { and, eq, sql } from 'drizzle-orm';
import { type AddressObject, simpleParser } from 'mailparser';
import { mboxReader } from 'mbox-reader';
import { db } from '../../db/client';
import { attachments, cases, emails, emailThreads } from '../../db/schema';
import { transaction } from '../../db/transaction';
import { ImportCaseNotFoundError } from '../errors';
import { newId } from '../../ids';
import { planUsageByOrganization } from '../../organizations/active-plan';
import { assertStorageFits, lockAllowances } from '../../organizations/allowances';
import { casePrefix, objectStorage } from '../../storage';

export interface EmailImportOptions {
  /** Which mailbox the evidence came from (grantId of the records). */
  grantId?: string;
  /** The mailbox owner's address (sourceEmail of the records). */
  sourceEmail?: string;
}

export interface ImportSummary {
  read: number;
  imported: number;
  skipped: number;
}

type Address = { name?: string; email?: string };

function addresses(value: AddressObject | AddressObject[] | undefined): Address[] {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list
    .flatMap((group) => group.value)
    .map((a) => ({ ...(a.name ? { name: a.name } : {}), ...(a.address ? { email: a.address.toLowerCase() } : {}) }));
}

/** Reads a file as RFC 822 messages: an mbox file ("From " separated) or one .eml message. */
async function* messagesOf(file: string): AsyncGenerator<{ content: Buffer; flags: string[]; labels: string[] }> {
  const head = (await readFile(file)).subarray(0, 5).toString('latin1');
  if (head === 'From ') {
    for await (const message of mboxReader(createReadStream(file))) {
      yield { content: message.content, flags: message.flags ?? [], labels: message.labels ?? [] };
    }
  } else {
    yield { content: await readFile(file), flags: [], labels: [] };
  }
}

/**
 * Imports RFC 822 messages (an .eml file or an mbox) into a case's email threads. Threads are
 * keyed by the first Message-ID of References, else In-Reply-To, else the message's own id, so
 * replies join their thread whatever order they arrive in. A message already imported (same
 * Message-ID in the case) is skipped: evidence is only ever added.
 *
 * Attachments count toward the plan's storage. Each message commits on its own, and one whose
 * attachments do not fit in what is left is refused (ForbiddenError STORAGE_LIMIT_REACHED, which
 * stops the import; the messages before it stay imported): checked before its attachments are
 * stored, and again under the allowance lock in its transaction.
 */
export async function importEmailFile(
  caseId: string,
  file: string,
  options: EmailImportOptions = {},
): Promise<ImportSummary> {
  const summary: ImportSummary = { read: 0, imported: 0, skipped: 0 };
  const [target] = await db().select({ organizationId: cases.organizationId }).from(cases).where(eq(cases.id, caseId));
  if (!target) throw new ImportCaseNotFoundError(caseId);
  const { organizationId } = target;
  const grantId = options.grantId ?? `import:${basename(file)}`;
  for await (const raw of messagesOf(file)) {
    summary.read += 1;
    const parsed = await simpleParser(Readable.from(raw.content));
    const messageId = (parsed.messageId ?? `<generated-${newId()}@import>`).trim();
    const references = (
      Array.isArray(parsed.references) ? parsed.references : parsed.references ? [parsed.references] : []
    ).map((r) => r.trim());
    const rootId = references[0] ?? parsed.inReplyTo?.trim() ?? messageId;
    const from = addresses(parsed.from);
    const to = addresses(parsed.to);
    const cc = addresses(parsed.cc);
    const bcc = addresses(parsed.bcc);
    const participants = [
      ...new Set([...from, ...to, ...cc, ...bcc].map((a) => a.email).filter((e): e is string => Boolean(e))),
    ];
    const domains = [...new Set(participants.map((e) => e.split('@')[1]!).filter(Boolean))];
    const text = parsed.text ?? '';
    const emailId = newId();
    const bytes = parsed.attachments.reduce((sum, attachment) => sum + attachment.size, 0);

    if (bytes > 0) {
      // Before storing anything: a message already imported is skipped (its attachments are not
      // stored again), and one that cannot fit is refused without leaving objects behind.
      const [[already], usage] = await Promise.all([
        db()
          .select({ id: emails.id })
          .from(emails)
          .where(and(eq(emails.caseId, caseId), eq(emails.externalId, messageId))),
        planUsageByOrganization(db(), [organizationId]).then((usages) => usages.get(organizationId)),
      ]);
      if (already) {
        summary.skipped += 1;
        continue;
      }
      if (usage) assertStorageFits(usage, bytes);
    }

    const stored = await Promise.all(
      parsed.attachments.map(async (file, index) => {
        const key = `${casePrefix(caseId)}emails/${emailId}/${index}-${(file.filename ?? 'attachment').replace(/[^\w.-]+/g, '_')}`;
        await objectStorage().put(key, file.content, file.contentType);
        return { name: file.filename ?? `attachment-${index + 1}`, providerId: key, size: file.size };
      }),
    );

    const inserted = await transaction(async (tx) => {
      // The allowance lock first (before the case row is written), as on every path that consumes an allowance.
      const usage = bytes > 0 ? await lockAllowances(tx, organizationId) : null;
      await tx
        .insert(emailThreads)
        .values({ caseId, rootMessageId: rootId, subject: parsed.subject ?? null, participants })
        .onConflictDoNothing();
      const [thread] = await tx
        .select()
        .from(emailThreads)
        .where(sql`${emailThreads.caseId} = ${caseId} and ${emailThreads.rootMessageId} = ${rootId}`);
      const [email] = await tx
        .insert(emails)
        .values({
          id: emailId,
          caseId,
          threadId: thread!.id,
          grantId,
          externalId: messageId,
          sourceEmail: options.sourceEmail ?? to[0]?.email ?? '',
          subject: parsed.subject ?? null,
          body: typeof parsed.html === 'string' ? parsed.html : text || null,
          snippet: text ? text.replace(/\s+/g, ' ').trim().slice(0, 200) : null,
          object: 'message',
          date: parsed.date ?? null,
          from,
          to,
          cc,
          bcc,
          replyTo: addresses(parsed.replyTo),
          folders: raw.labels,
          starred: raw.flags.includes('\\Flagged'),
          unread: raw.flags.length > 0 && !raw.flags.includes('\\Seen'),
          threadIndex: references.length,
          participantEmails: participants,
          participantDomains: domains,
          inReplyTo: parsed.inReplyTo ?? null,
        })
        .onConflictDoNothing()
        .returning({ id: emails.id });
      if (!email) return false;
      if (usage) assertStorageFits(usage, bytes);
      if (stored.length)
        await tx
          .insert(attachments)
          .values(stored.map((a) => ({ ...a, emailId: email.id, provider: 'object-storage' })));
      await tx
        .update(emailThreads)
        .set({
          messageCount: sql`${emailThreads.messageCount} + 1`,
          lastMessageAt: parsed.date
            ? sql`greatest(${emailThreads.lastMessageAt}, ${sql.param(parsed.date, emailThreads.lastMessageAt)})`
            : emailThreads.lastMessageAt,
          participants: sql`array(select distinct unnest(${emailThreads.participants} || ${sql.param(participants, emailThreads.participants)}))`,
          subject: sql`coalesce(${emailThreads.subject}, ${parsed.subject ?? null})`,
        })
        .where(eq(emailThreads.id, thread!.id));
      if (bytes)
        await tx
          .update(cases)
          .set({ storageBytes: sql`${cases.storageBytes} + ${bytes}` })
          .where(eq(cases.id, caseId));
      return true;
    });
    if (inserted) summary.imported += 1;
    else summary.skipped += 1;
  }
  return summary;
}
