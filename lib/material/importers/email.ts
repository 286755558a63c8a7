import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { and, eq, sql } from 'drizzle-orm';
import { type AddressObject, simpleParser } from 'mailparser';
import { mboxReader } from 'mbox-reader';
import { recordAudit } from '../../audit';
import { now } from '../../clock';
import { db } from '../../db/client';
import { attachments, cases, emails, emailThreads, evidenceObjects } from '../../db/schema';
import { transaction } from '../../db/transaction';
import { ImportCaseNotFoundError } from '../errors';
import { hashBytes, importingUserId } from '../evidence-hash';
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

const LF = 0x0a;
const FROM_ = Buffer.from('From ', 'latin1');

/**
 * The raw bytes of each message of an mbox, as they appear in the file, for its evidence hash:
 * everything after a message's `From ` separator line up to the next one (or the end of the file),
 * less the one empty line mbox writes after each message when it is there. The separator line is
 * not part of the message, and `>From ` lines are NOT unquoted (that is mbox's escaping, but
 * undoing it is a guess between mboxo and mboxrd): what is hashed is exactly what the file holds.
 * A message written into an mbox as `From …\n<message>\n` hashes as the .eml file `<message>` did.
 *
 * Separators are found as mbox-reader finds them (every line that starts with `From `, lines split
 * at LF), so the messages line up one for one with the ones it parses.
 */
export async function* rawMboxMessages(file: string): AsyncGenerator<Buffer> {
  let message: Buffer[] | null = null;
  let partial: Buffer[] = [];
  const endMessage = () => {
    if (!message) return null;
    const bytes = Buffer.concat(message);
    message = null;
    // The empty line that ends an mbox message: "\n\n" or "\r\n\r\n" (also "\n\r\n") at its end.
    if (bytes.length >= 2 && bytes[bytes.length - 1] === LF) {
      const emptyLine = bytes[bytes.length - 2] === LF ? 1 : bytes[bytes.length - 2] === 0x0d ? 2 : 0;
      const before = bytes.length - 1 - emptyLine;
      if (emptyLine && before >= 0 && bytes[before] === LF) return bytes.subarray(0, bytes.length - emptyLine);
    }
    return bytes;
  };
  const takeLine = (line: Buffer) => {
    if (line.subarray(0, FROM_.length).equals(FROM_)) {
      const ended = endMessage();
      message = [];
      return ended;
    }
    message?.push(line);
    return null;
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(LF); end >= 0; end = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, end + 1);
      const line: Buffer = partial.length ? Buffer.concat([...partial, piece]) : piece;
      partial = [];
      start = end + 1;
      const ended = takeLine(line);
      if (ended) yield ended;
    }
    if (start < chunk.length) partial.push(chunk.subarray(start));
  }
  if (partial.length) {
    const ended = takeLine(Buffer.concat(partial));
    if (ended) yield ended;
  }
  const last = endMessage();
  if (last) yield last;
}

/**
 * Reads a file as RFC 822 messages: an mbox file ("From " separated) or one .eml message. `raw` is
 * the message's bytes as the file holds them (its evidence hash); `content` is what is parsed.
 */
async function* messagesOf(
  file: string,
): AsyncGenerator<{ raw: Buffer; content: Buffer; flags: string[]; labels: string[] }> {
  if (await isMbox(file)) {
    // mbox-reader parses (unquoting, flags, labels); rawMboxMessages gives the same messages as in the file.
    const raws = rawMboxMessages(file);
    const misaligned = () => new Error(`${basename(file)}: the mbox's messages could not be told apart`);
    try {
      for await (const message of mboxReader(createReadStream(file))) {
        const raw = await raws.next();
        if (raw.done) throw misaligned();
        yield { raw: raw.value, content: message.content, flags: message.flags ?? [], labels: message.labels ?? [] };
      }
      if (!(await raws.next()).done) throw misaligned();
    } finally {
      // Closes its file when the import stops early (a storage limit, an error).
      await raws.return(undefined);
    }
  } else {
    const content = await readFile(file);
    yield { raw: content, content, flags: [], labels: [] };
  }
}

/** Whether the file starts as an mbox does, read from its first five bytes only. */
async function isMbox(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(FROM_.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(FROM_);
  } finally {
    await handle.close();
  }
}

/**
 * Imports RFC 822 messages (an .eml file or an mbox) into a case's email threads. Threads are
 * keyed by the first Message-ID of References, else In-Reply-To, else the message's own id, so
 * replies join their thread whatever order they arrive in. A message already imported (same
 * Message-ID in the case) is skipped: evidence is only ever added.
 *
 * Each email records the SHA-256 and size of its raw message, each attachment the SHA-256 of its
 * bytes (also in evidence_objects, which downloads check), with the file's name and who imported
 * it; each message's transaction records `evidence.emails.imported`.
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
  const importSource = basename(file);
  const importedById = importingUserId();
  const grantId = options.grantId ?? `import:${importSource}`;
  for await (const raw of messagesOf(file)) {
    summary.read += 1;
    const message = hashBytes(raw.raw);
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
        // The decoded bytes, exactly what was stored: the download check hashes the object again.
        const { sha256, sizeBytes } = hashBytes(file.content);
        return {
          name: file.filename ?? `attachment-${index + 1}`,
          providerId: key,
          size: file.size,
          sha256,
          sizeBytes,
        };
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
          sha256: message.sha256,
          sizeBytes: message.sizeBytes,
          importSource,
          importedById,
        })
        .onConflictDoNothing()
        .returning({ id: emails.id });
      if (!email) return false;
      if (usage) assertStorageFits(usage, bytes);
      if (stored.length) {
        await tx.insert(attachments).values(
          stored.map(({ name, providerId, size, sha256 }) => ({
            name,
            providerId,
            size,
            sha256,
            emailId: email.id,
            provider: 'object-storage',
          })),
        );
        const recordedAt = now();
        await tx
          .insert(evidenceObjects)
          .values(
            stored.map((a) => ({ key: a.providerId, caseId, sha256: a.sha256, sizeBytes: a.sizeBytes, recordedAt })),
          )
          .onConflictDoNothing();
      }
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
      // Each message commits on its own, so each is its own event: the hash it was imported with, chained.
      recordAudit(tx, {
        action: 'evidence.emails.imported',
        organizationId,
        caseId,
        target: { type: 'email', id: email.id },
        metadata: {
          file: importSource,
          emails: 1,
          attachments: stored.length,
          messageId,
          sha256: message.sha256,
          sizeBytes: message.sizeBytes,
        },
      });
      return true;
    });
    if (inserted) summary.imported += 1;
    else summary.skipped += 1;
  }
  return summary;
}
