import { and, eq, inArray, sql } from 'drizzle-orm';
import { now } from '../../clock';
import { db, type Tx } from '../../db/client';
import { evidenceObjects } from '../../db/schema/audit';
import { attachments, emails, emailThreads } from '../../db/schema/material';
import { newId } from '../../ids';
import { planUsageByOrganization } from '../../organizations/active-plan';
import { assertStorageFits } from '../../organizations/allowances';
import { objectStorage } from '../../storage/configured-storage';
import { casePrefix } from '../../storage/keys';
import type { BatchCounts, ReadItem, StreamImportOptions, StreamImportResult } from './batch';
import { fileImport } from './file-import';
import { atMostMaxItems, IMPORT_LIMITS } from './limits';
import { type ParsedEmail, readEmails } from './readers/email';
import {
  batchSizeOf,
  batchTransaction,
  countBatch,
  endBatch,
  importInBatches,
  insertItems,
  insertRows,
  rowBytesOf,
  storedTextBytes,
} from './run-batches';

export interface EmailImportOptions {
  /** Which mailbox the evidence came from (grantId of the records). */
  grantId?: string;
  /** The mailbox owner's address (sourceEmail of the records). */
  sourceEmail?: string;
}

export type ImportSummary = BatchCounts;

/** Messages per batch: measured on the bench mailbox (about 10 KB a message), larger batches gain nothing. */
const DEFAULT_BATCH_SIZE = 500;
/** A batch also closes once its messages hold this many bytes, so big messages do not pile up in memory. */
const MAX_BATCH_BYTES = IMPORT_LIMITS.emailBatchBytes;
/** Attachments stored at once: enough to keep the disk or S3 busy, few enough to bound memory and sockets. */
const CONCURRENT_OBJECT_WRITES = 8;

/** Where an attachment of an email is stored. */
const attachmentKey = (caseId: string, emailId: string, keyName: string) =>
  `${casePrefix(caseId)}emails/${emailId}/${keyName}`;

/** Runs `work` over `items`, at most `limit` at once. */
async function eachConcurrently<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

type EmailBatch = Array<ReadItem<ParsedEmail> & { emailId: string; isNew: boolean }>;

/**
 * Commits one batch of messages. Before the transaction: messages the case already holds (same
 * Message-ID, or an earlier one of the batch) are skipped and their attachments not stored; the
 * attachments and rows (rowBytesOf) of the new ones must fit the plan's storage, or the batch
 * commits up to the first message that does not fit and then that refusal is thrown
 * (STORAGE_LIMIT_REACHED), no object of it stored. The transaction checks the storage again under
 * the allowance lock (countBatch).
 */
async function commitEmails(
  options: StreamImportOptions,
  read: ReadItem<ParsedEmail>[],
  firstItemIndex: number,
): Promise<BatchCounts> {
  const { caseId, organizationId } = options.target;
  const held = new Set(
    (
      await db()
        .select({ externalId: emails.externalId })
        .from(emails)
        .where(
          and(eq(emails.caseId, caseId), inArray(emails.externalId, [...new Set(read.map((r) => r.item.messageId))])),
        )
    ).map((row) => row.externalId),
  );
  const batch: EmailBatch = read.map((r) => {
    const isNew = !held.has(r.item.messageId);
    held.add(r.item.messageId);
    return { ...r, emailId: newId(), isNew };
  });

  let accepted = batch;
  let refusal: unknown = null;
  if (batch.some((m) => m.isNew)) {
    const usage = (await planUsageByOrganization(db(), [organizationId])).get(organizationId);
    let bytes = 0;
    for (const [index, message] of batch.entries()) {
      if (!usage || !message.isNew) continue;
      // Its attachments and its row (what countBatch counts for it once written).
      const cost = message.item.attachmentBytes + rowBytesOf('email', 1, storedTextBytes(message.item.fields));
      try {
        assertStorageFits({ ...usage, storageUsed: usage.storageUsed + bytes }, cost);
      } catch (error) {
        accepted = batch.slice(0, index);
        refusal = error;
        break;
      }
      bytes += cost;
    }
  }

  const counts = accepted.length ? await writeEmails(options, accepted, firstItemIndex) : null;
  if (refusal) throw refusal;
  return counts!;
}

/** Stores the new messages' attachments, then writes the batch's rows in one transaction with its progress. */
async function writeEmails(
  options: StreamImportOptions,
  batch: EmailBatch,
  firstItemIndex: number,
): Promise<BatchCounts> {
  const { target } = options;
  const { caseId } = target;
  const candidates = batch.filter((m) => m.isNew);
  const objects = candidates.flatMap((m) =>
    m.item.attachments.map((attachment) => ({
      emailId: m.emailId,
      key: attachmentKey(caseId, m.emailId, attachment.keyName),
      attachment,
    })),
  );
  const storage = objectStorage();
  await eachConcurrently(objects, CONCURRENT_OBJECT_WRITES, ({ key, attachment }) =>
    storage.put(key, attachment.content, attachment.contentType),
  );

  // The allowance lock first (before the case row is written), as on every path that consumes an allowance.
  return batchTransaction(options, async (tx, usage) => {
    let imported: EmailBatch = [];
    let threadIds = new Map<string, string>();
    let textBytes = 0;
    if (candidates.length) {
      threadIds = await upsertThreads(tx, caseId, candidates);
      const grantId = target.grantId ?? `import:${target.importSource}`;
      const inserted = await insertItems(
        tx,
        emails,
        candidates.map((m) => ({
          row: {
            ...m.item.fields,
            id: m.emailId,
            caseId,
            threadId: threadIds.get(m.item.rootId)!,
            grantId,
            sourceEmail: target.sourceEmail ?? m.item.firstTo ?? '',
            importSource: target.importSource,
            importedById: target.importedById,
          },
          content: m.item.fields,
        })),
      );
      const insertedIds = new Set(inserted.ids);
      imported = candidates.filter((m) => insertedIds.has(m.emailId));
      textBytes = inserted.textBytes;
    }
    const bytes = imported.reduce((sum, m) => sum + m.item.attachmentBytes, 0);
    const importedIds = new Set(imported.map((m) => m.emailId));
    const stored = objects.filter((object) => importedIds.has(object.emailId));
    await insertRows(
      tx,
      attachments,
      stored.map(({ emailId, key, attachment }) => ({
        emailId,
        name: attachment.name,
        providerId: key,
        size: attachment.size,
        sha256: attachment.sha256,
        provider: 'object-storage',
      })),
    );
    const recordedAt = now();
    await insertRows(
      tx,
      evidenceObjects,
      stored.map(({ key, attachment }) => ({
        key,
        caseId,
        sha256: attachment.sha256,
        sizeBytes: attachment.sizeBytes,
        recordedAt,
      })),
    );
    if (imported.length) await countIntoThreads(tx, imported, threadIds);
    await countBatch(tx, caseId, usage, {
      objectBytes: bytes,
      rowBytes: rowBytesOf('email', imported.length, textBytes),
    });
    return endBatch(tx, options, batch, {
      action: 'evidence.emails.imported',
      firstItemIndex,
      imported: imported.length,
      metadata: { attachments: stored.length },
    });
  });
}

/** The batch's threads, created when new (with the first subject and the participants), by root Message-ID. */
async function upsertThreads(tx: Tx, caseId: string, messages: EmailBatch): Promise<Map<string, string>> {
  const roots = new Map<string, { subject: string | null; participants: Set<string> }>();
  for (const { item } of messages) {
    const root = roots.get(item.rootId);
    if (!root)
      roots.set(item.rootId, { subject: item.fields.subject ?? null, participants: new Set(item.participants) });
    else {
      root.subject ??= item.fields.subject ?? null;
      for (const participant of item.participants) root.participants.add(participant);
    }
  }
  await tx
    .insert(emailThreads)
    .values(
      [...roots].map(([rootMessageId, root]) => ({
        caseId,
        rootMessageId,
        subject: root.subject,
        participants: [...root.participants],
      })),
    )
    .onConflictDoNothing();
  const threads = await tx
    .select({ id: emailThreads.id, rootMessageId: emailThreads.rootMessageId })
    .from(emailThreads)
    .where(and(eq(emailThreads.caseId, caseId), inArray(emailThreads.rootMessageId, [...roots.keys()])));
  return new Map(threads.map((thread) => [thread.rootMessageId, thread.id]));
}

/**
 * Adds the imported messages to their threads in one statement: message count, latest date,
 * participants merged, the subject kept or else the first one the batch brings.
 */
async function countIntoThreads(tx: Tx, imported: EmailBatch, threadIds: Map<string, string>): Promise<void> {
  const byThread = new Map<
    string,
    { id: string; messages: number; last: Date | null; participants: Set<string>; subject: string | null }
  >();
  for (const { item } of imported) {
    const id = threadIds.get(item.rootId)!;
    const thread = byThread.get(id) ?? { id, messages: 0, last: null, participants: new Set(), subject: null };
    byThread.set(id, thread);
    thread.messages += 1;
    const date = item.fields.date ?? null;
    if (date && (!thread.last || date > thread.last)) thread.last = date;
    for (const participant of item.participants) thread.participants.add(participant);
    thread.subject ??= item.fields.subject ?? null;
  }
  const rows = [...byThread.values()].map((thread) => ({ ...thread, participants: [...thread.participants] }));
  await tx
    .update(emailThreads)
    .set({
      messageCount: sql`${emailThreads.messageCount} + added.messages`,
      lastMessageAt: sql`greatest(${emailThreads.lastMessageAt}, added.last)`,
      participants: sql`array(select distinct unnest(${emailThreads.participants} || added.participants))`,
      subject: sql`coalesce(${emailThreads.subject}, added.subject)`,
    })
    .from(
      sql`jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as added(id uuid, messages integer, last timestamptz, participants text[], subject text)`,
    )
    .where(sql`${emailThreads.id} = added.id`);
}

/**
 * Imports RFC 822 messages (an mbox, or one .eml message) into a case's email threads, streaming
 * the file from `options.from` and committing in batches (see importInBatches). Threads are keyed
 * by the first Message-ID of References, else In-Reply-To, else the message's own id, so replies
 * join their thread whatever order they arrive in. A message already imported (same Message-ID in
 * the case) is skipped: evidence is only ever added, and a retry or a resume adds nothing twice.
 *
 * Each email records the SHA-256 and size of its raw message (readers/mbox.ts says what that is
 * inside an mbox), each attachment the SHA-256 of its bytes (also in evidence_objects, which
 * downloads check), with the file's name and who imported it. Each batch that adds messages records one
 * `evidence.emails.imported` event. Attachments count toward the plan's storage (commitEmails).
 */
export async function importEmailStream(options: StreamImportOptions): Promise<StreamImportResult> {
  return importInBatches(
    options,
    atMostMaxItems(readEmails(options, (emailId, keyName) => attachmentKey(options.target.caseId, emailId, keyName))),
    {
      size: batchSizeOf(options, DEFAULT_BATCH_SIZE),
      maxWeight: MAX_BATCH_BYTES,
      weigh: (email) => email.weight,
    },
    (batch, firstItemIndex) => commitEmails(options, batch, firstItemIndex),
  );
}

/** Imports a local .eml or mbox file into a case at once (the file read as a stream, committed in batches). */
export async function importEmailFile(
  caseId: string,
  file: string,
  options: EmailImportOptions = {},
): Promise<ImportSummary> {
  const { read, imported, skipped } = await importEmailStream(await fileImport(caseId, file, options));
  return { read, imported, skipped };
}
