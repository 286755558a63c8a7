import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { and, asc, count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../lib/errors';
import { db, type Tx } from '../../lib/db/client';
import {
  cases,
  emails,
  emailThreads,
  evidenceObjects,
  networkConversations,
  networkMessages,
  organizationPlans,
  supportTickets,
} from '../../lib/db/schema';
import {
  type CommittedBatch,
  FILE_START,
  type ImportPosition,
  type ImportTarget,
  importEmailStream,
  importNetworkMessagesStream,
  importStream,
  importSupportTicketsStream,
  MalformedImportError,
  type StreamImportOptions,
} from '../../lib/material/importers';
import { MboxMessageTooLargeError, mboxMessages } from '../../lib/material/importers/readers/mbox';
import { caseWithOwner } from '../harness/cases';
import { rowBytesOfMbox } from '../harness/material';
import { auditEventsOf } from '../harness/audit';
import { ownDataDir } from '../harness/data-dir';

/**
 * Issue 17: the importers stream their file and commit in batches, each batch one transaction
 * with its progress (onBatch), so an import can pause and resume from its checkpoint, and a
 * malformed file keeps everything before the bad item. Through the real importers on a real database.
 */

/** Stored attachments go to a directory of this file's own. */
const dataDir = ownDataDir('streaming-importers-');

const write = (name: string, content: string | Buffer) => {
  const path = join(dataDir.path, `${randomUUID()}-${name}`);
  writeFileSync(path, content);
  return path;
};

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;

/** What an import run saw: the offsets it opened the file at, and each batch as onBatch got it (with a count read inside its transaction). */
interface Run {
  opened: number[];
  batches: Array<CommittedBatch & { rowsInTransaction: number }>;
}

function options(
  s: Setup,
  file: string,
  run: Run,
  extra: Omit<Partial<StreamImportOptions>, 'target'> & {
    target?: Partial<ImportTarget>;
    countRows?: (tx: Tx) => Promise<number>;
  } = {},
): StreamImportOptions {
  const { target, countRows, ...rest } = extra;
  return {
    target: {
      caseId: s.caseId,
      organizationId: s.organizationId,
      importSource: 'export-file',
      importedById: s.owner.id,
      ...target,
    },
    open: async (start) => {
      run.opened.push(start);
      return createReadStream(file, { start });
    },
    from: FILE_START,
    onBatch: async (tx, batch) => {
      run.batches.push({ ...batch, rowsInTransaction: countRows ? await countRows(tx) : -1 });
    },
    ...rest,
  };
}

const newRun = (): Run => ({ opened: [], batches: [] });

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

/** An mbox of `n` messages, with where each separator line starts and each message's raw bytes. */
function mbox(n: number, options: { broken?: number } = {}) {
  const messages = Array.from({ length: n }, (_, index) => {
    const number = index + 1;
    const headers =
      number === options.broken
        ? 'This line is not a header field\n'
        : `Message-ID: <m${number}@lee-law.example>\n${number > 1 ? 'In-Reply-To: <m1@lee-law.example>\nReferences: <m1@lee-law.example>\n' : ''}Date: Mon, 02 Nov 2026 10:0${number % 10}:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Party ${number} <p${number}@roe.example>\nSubject: ${number > 1 ? 'Re: ' : ''}Offer\n`;
    return `${headers}\nBody of message ${number}.\n`;
  });
  const offsets: number[] = [];
  let text = '';
  for (const message of messages) {
    offsets.push(Buffer.byteLength(text));
    text += `From ann@lee-law.example Mon Nov  2 10:00:00 2026\n${message}\n`;
  }
  return { text, offsets, size: Buffer.byteLength(text), messages };
}

const emailsOf = (caseId: string) =>
  db().select().from(emails).where(eq(emails.caseId, caseId)).orderBy(asc(emails.externalId));
const emailCount = (caseId: string) => async (tx: Tx) =>
  (await tx.select({ n: count() }).from(emails).where(eq(emails.caseId, caseId)))[0]!.n;

describe('email import in batches', () => {
  it("commits each batch with its progress and checkpoint (the next message's separator), one event per batch", async () => {
    // Prepare
    const s = await caseWithOwner();
    const box = mbox(7);
    const file = write('box.mbox', box.text);
    const run = newRun();
    const importId = randomUUID();
    // Act
    const result = await importEmailStream(
      options(s, file, run, { batchSize: 3, target: { importId }, countRows: emailCount(s.caseId) }),
    );
    // Assess: three batches, each seen inside its own transaction with its rows written
    expect(result).toEqual({
      read: 7,
      imported: 7,
      skipped: 0,
      finished: true,
      position: { byteOffset: box.size, itemIndex: 7 },
    });
    expect(run.batches).toEqual([
      { read: 3, imported: 3, skipped: 0, next: { byteOffset: box.offsets[3], itemIndex: 3 }, rowsInTransaction: 3 },
      { read: 3, imported: 3, skipped: 0, next: { byteOffset: box.offsets[6], itemIndex: 6 }, rowsInTransaction: 6 },
      { read: 1, imported: 1, skipped: 0, next: { byteOffset: box.size, itemIndex: 7 }, rowsInTransaction: 7 },
    ]);
    expect(run.opened).toEqual([0]);
    // Every message hashes as its bytes in the file (the From_ line and the blank line after it excluded)
    const rows = await emailsOf(s.caseId);
    expect(rows.map((row) => row.sha256)).toEqual(box.messages.map((message) => sha256(message)));
    // One thread counts all seven (counted across batches)
    const [thread] = await db().select().from(emailThreads).where(eq(emailThreads.caseId, s.caseId));
    expect(thread).toMatchObject({ rootMessageId: '<m1@lee-law.example>', messageCount: 7, subject: 'Offer' });
    expect(thread!.participants).toHaveLength(8);
    const events = await auditEventsOf(s.organizationId, 'evidence.emails.imported');
    expect(events.map((event) => event.metadata)).toEqual([
      { file: 'export-file', importId, firstItemIndex: 0, read: 3, imported: 3, skipped: 0, attachments: 0 },
      { file: 'export-file', importId, firstItemIndex: 3, read: 3, imported: 3, skipped: 0, attachments: 0 },
      { file: 'export-file', importId, firstItemIndex: 6, read: 1, imported: 1, skipped: 0, attachments: 0 },
    ]);
  });

  it('pauses after a batch when asked, and resumes from the checkpoint by seeking to its separator', async () => {
    // Prepare
    const s = await caseWithOwner();
    const box = mbox(7);
    const file = write('box.mbox', box.text);
    const first = newRun();
    // Act: paused after the first batch
    const paused = await importEmailStream(options(s, file, first, { batchSize: 3, shouldPause: () => true }));
    // Assess
    expect(paused).toMatchObject({
      read: 3,
      imported: 3,
      finished: false,
      position: { byteOffset: box.offsets[3], itemIndex: 3 },
    });
    expect(await emailsOf(s.caseId)).toHaveLength(3);
    // Act: resumed where it stopped
    const second = newRun();
    const resumed = await importEmailStream(options(s, file, second, { batchSize: 3, from: paused.position }));
    // Assess: the file is opened at message 4's separator, and the rest is imported once
    expect(second.opened).toEqual([box.offsets[3]]);
    expect(resumed).toEqual({
      read: 4,
      imported: 4,
      skipped: 0,
      finished: true,
      position: { byteOffset: box.size, itemIndex: 7 },
    });
    expect(second.batches.map((batch) => batch.next.itemIndex)).toEqual([6, 7]);
    expect((await emailsOf(s.caseId)).map((row) => row.externalId)).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => `<m${n}@lee-law.example>`),
    );
    const [thread] = await db().select().from(emailThreads).where(eq(emailThreads.caseId, s.caseId));
    expect(thread!.messageCount).toBe(7);
  });

  it('reads an mbox from a mid-file offset: the messages from there on, hashed as in the file', async () => {
    // Prepare
    const s = await caseWithOwner();
    const box = mbox(5);
    const file = write('box.mbox', box.text);
    const run = newRun();
    // Act
    const result = await importEmailStream(
      options(s, file, run, { from: { byteOffset: box.offsets[2]!, itemIndex: 2 } }),
    );
    // Assess
    expect(run.opened).toEqual([box.offsets[2]]);
    expect(result).toEqual({
      read: 3,
      imported: 3,
      skipped: 0,
      finished: true,
      position: { byteOffset: box.size, itemIndex: 5 },
    });
    const rows = await emailsOf(s.caseId);
    expect(rows.map((row) => [row.externalId, row.sha256])).toEqual(
      [3, 4, 5].map((n) => [`<m${n}@lee-law.example>`, sha256(box.messages[n - 1]!)]),
    );
  });

  it('a crash inside a batch writes nothing of it; resuming from the last checkpoint, or from the start, adds nothing twice', async () => {
    // Prepare: the second batch's transaction fails after its rows are written (as a crash would lose it)
    const s = await caseWithOwner();
    const box = mbox(7);
    const file = write('box.mbox', box.text);
    const run = newRun();
    let checkpoint: ImportPosition = FILE_START;
    const crashing = options(s, file, run, { batchSize: 3 });
    // Act
    const crashed = await importEmailStream({
      ...crashing,
      onBatch: async (tx, batch) => {
        if (batch.next.itemIndex > 3) throw new Error('the worker died');
        checkpoint = batch.next;
        await crashing.onBatch!(tx, batch);
      },
    }).catch((error: Error) => error);
    // Assess: the first batch stays, the second is not half-written
    expect(crashed).toMatchObject({ message: 'the worker died' });
    expect(checkpoint).toEqual({ byteOffset: box.offsets[3], itemIndex: 3 });
    expect(await emailsOf(s.caseId)).toHaveLength(3);
    // Act: resumed from the checkpoint, then the whole file again
    const resumed = await importEmailStream(options(s, file, newRun(), { batchSize: 3, from: checkpoint }));
    const again = await importEmailStream(options(s, file, newRun(), { batchSize: 3 }));
    // Assess
    expect(resumed).toMatchObject({ read: 4, imported: 4, skipped: 0, finished: true });
    expect(again).toMatchObject({ read: 7, imported: 0, skipped: 7, finished: true });
    expect(await emailsOf(s.caseId)).toHaveLength(7);
    const [thread] = await db().select().from(emailThreads).where(eq(emailThreads.caseId, s.caseId));
    expect(thread!.messageCount).toBe(7);
    // A batch that adds nothing records no event: one per batch that imported
    expect(await auditEventsOf(s.organizationId, 'evidence.emails.imported')).toHaveLength(3);
  });

  it('a message that is not one fails the import naming it, after the messages before it are committed', async () => {
    // Prepare: message 4 of 6 starts with a body line (an unquoted "From " line would do this)
    const s = await caseWithOwner();
    const box = mbox(6, { broken: 4 });
    const file = write('box.mbox', box.text);
    const run = newRun();
    // Act
    const error = await importEmailStream(options(s, file, run, { batchSize: 2 })).catch((e: unknown) => e);
    // Assess: the error names the message (1-based) and its byte; messages 1-3 are in, the last batch ends at it
    expect(error).toBeInstanceOf(MalformedImportError);
    expect(error).toMatchObject({
      code: 'MALFORMED_FILE',
      itemIndex: 3,
      message: `Message 4 (byte ${box.offsets[3]}) does not start with a header field: not an RFC 5322 message`,
    });
    expect((await emailsOf(s.caseId)).map((row) => row.externalId)).toEqual(
      [1, 2, 3].map((n) => `<m${n}@lee-law.example>`),
    );
    expect(run.batches.map((batch) => [batch.read, batch.next])).toEqual([
      [2, { byteOffset: box.offsets[2], itemIndex: 2 }],
      [1, { byteOffset: box.offsets[3], itemIndex: 3 }],
    ]);
  });

  it('an .eml file is one message; a file that is no message is malformed', async () => {
    const s = await caseWithOwner();
    const eml = mbox(1).messages[0]!;
    const file = write('one.eml', eml);
    expect(await importEmailStream(options(s, file, newRun()))).toEqual({
      read: 1,
      imported: 1,
      skipped: 0,
      finished: true,
      position: { byteOffset: Buffer.byteLength(eml), itemIndex: 1 },
    });
    const notMail = write('notes.txt', 'Shopping list\n- milk\n');
    expect(await importEmailStream(options(s, notMail, newRun())).catch((e: unknown) => e)).toMatchObject({
      itemIndex: 0,
      message: 'Message 1 does not start with a header field: not an RFC 5322 message',
    });
  });
});

describe('mbox reading', () => {
  // What the mbox-reader package gave the parser for these files (recorded before it was replaced), and the raw bytes hashed.
  const files = [
    {
      text: 'From a@b Mon Nov  2 10:00:00 2026\nSubject: x\n\nbody\n\nFrom c@d Tue\nSubject: y\nStatus: RO\nX-Status: F\n\n>From here\n>>From there\n> From not\nend\n',
      messages: [
        { raw: 'Subject: x\n\nbody\n', content: 'Subject: x\n\nbody', flags: [], labels: [] },
        {
          raw: 'Subject: y\nStatus: RO\nX-Status: F\n\n>From here\n>>From there\n> From not\nend\n',
          content: 'Subject: y\nStatus: RO\nX-Status: F\n\nFrom here\n>From there\n> From not\nend',
          flags: ['\\Seen', '\\Flagged'],
          labels: [],
        },
      ],
    },
    {
      text: 'From a@b\r\nSubject: crlf\r\nX-Gmail-Labels: Inbox, =?UTF-8?Q?Caf=C3=A9?=,Important\r\n\r\nline1\r\n>From q\r\n\r\nFrom b@c\r\nSubject: 2\r\n\r\nlast\r\n\r\n',
      messages: [
        {
          raw: 'Subject: crlf\r\nX-Gmail-Labels: Inbox, =?UTF-8?Q?Caf=C3=A9?=,Important\r\n\r\nline1\r\n>From q\r\n',
          content: 'Subject: crlf\nX-Gmail-Labels: Inbox, =?UTF-8?Q?Caf=C3=A9?=,Important\n\nline1\nFrom q',
          flags: [],
          labels: ['Inbox', 'Café', 'Important'],
        },
        { raw: 'Subject: 2\r\n\r\nlast\r\n', content: 'Subject: 2\n\nlast', flags: [], labels: [] },
      ],
    },
  ];

  it.each([1, 2, 5, 7, 4096])(
    'reads messages as mbox-reader parsed them and as the file holds them, in chunks of %i bytes',
    async (size) => {
      for (const { text, messages } of files) {
        const bytes = Buffer.from(text, 'latin1');
        const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
          bytes.subarray(i * size, (i + 1) * size),
        );
        const read = [];
        for await (const message of mboxMessages(Readable.from(chunks), 0)) read.push(message);
        expect(
          read.map(({ raw, content, flags, labels }) => ({
            raw: raw.toString('latin1'),
            content: content.toString('latin1'),
            flags,
            labels,
          })),
        ).toEqual(messages);
        // Each message starts where the one before ends, on its separator line, and the last ends the file.
        expect(read.map((m) => bytes.subarray(m.offset, m.offset + 5).toString())).toEqual(messages.map(() => 'From '));
        expect(read.map((m) => m.end)).toEqual([...read.slice(1).map((m) => m.offset), bytes.length]);
      }
    },
  );

  it('refuses a message longer than the reader holds, naming where it starts', async () => {
    const text = `From a\nSubject: short\n\nok\n\nFrom b\nSubject: long\n\n${'x'.repeat(200)}\n`;
    const read: number[] = [];
    const error = await (async () => {
      for await (const message of mboxMessages(Readable.from([Buffer.from(text)]), 0, 100)) read.push(message.offset);
    })().catch((e: unknown) => e);
    expect(read).toEqual([0]);
    expect(error).toBeInstanceOf(MboxMessageTooLargeError);
    expect(error).toMatchObject({ offset: text.indexOf('From b') });
  });
});

/** An mbox of messages with one attachment of `bytes` bytes each. */
function mboxWithAttachments(n: number, bytes: number) {
  const offsets: number[] = [];
  let text = '';
  for (let number = 1; number <= n; number += 1) {
    offsets.push(Buffer.byteLength(text));
    text += [
      'From ann@lee-law.example Mon Nov  2 10:00:00 2026',
      `Message-ID: <a${number}@lee-law.example>`,
      'From: Ann Lee <ann@lee-law.example>',
      'To: Bob Roe <bob@roe.example>',
      `Subject: Exhibit ${number}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'See attached.',
      '--b1',
      `Content-Type: application/pdf; name="exhibit-${number}.pdf"`,
      'Content-Disposition: attachment',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.alloc(bytes, number).toString('base64'),
      '--b1--',
      '',
      '',
    ].join('\n');
  }
  return { text, offsets };
}

describe('email import and the storage allowance', () => {
  it('commits the messages of a batch that fit, then refuses the first that does not, storing nothing of it', async () => {
    // Prepare: four messages of 400 attachment bytes each, one batch; room for 1,000 bytes and
    // the rows of two messages (issue 29: rows count too)
    const s = await caseWithOwner();
    const box = mboxWithAttachments(4, 400);
    const rowsOfTwo = (await rowBytesOfMbox(box.text)) / 2;
    await db()
      .update(organizationPlans)
      .set({ storageBytes: 1_000 + rowsOfTwo })
      .where(eq(organizationPlans.organizationId, s.organizationId));
    const file = write('box.mbox', box.text);
    const run = newRun();
    // Act
    const error = await importEmailStream(options(s, file, run, { batchSize: 10 })).catch((e: unknown) => e);
    // Assess: messages 1 and 2 are in with their objects, counted toward the case; message 3 stopped it
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'STORAGE_LIMIT_REACHED' });
    expect(run.batches).toEqual([
      expect.objectContaining({ read: 2, imported: 2, next: { byteOffset: box.offsets[2], itemIndex: 2 } }),
    ]);
    expect((await emailsOf(s.caseId)).map((row) => row.externalId)).toEqual([
      '<a1@lee-law.example>',
      '<a2@lee-law.example>',
    ]);
    const [held] = await db().select({ bytes: cases.storageBytes }).from(cases).where(eq(cases.id, s.caseId));
    expect(held!.bytes).toBe(800);
    expect(readdirSync(join(dataDir.path, 'objects', 'cases', s.caseId, 'emails'))).toHaveLength(2);
    expect(await db().select().from(evidenceObjects).where(eq(evidenceObjects.caseId, s.caseId))).toHaveLength(2);
    // Re-importing: the two already in are skipped (their attachments not stored again), the third refused again
    const again = newRun();
    expect(await importEmailStream(options(s, file, again, { batchSize: 10 })).catch((e: unknown) => e)).toMatchObject({
      code: 'STORAGE_LIMIT_REACHED',
    });
    expect(again.batches).toEqual([expect.objectContaining({ read: 2, imported: 0, skipped: 2 })]);
    expect(readdirSync(join(dataDir.path, 'objects', 'cases', s.caseId, 'emails'))).toHaveLength(2);
  });
});

const CSV_HEADER = 'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER\n';
const csvRow = (n: number, conversation = 'c1', title = '') =>
  `${conversation},${title},Person ${n},Ann Lee,2026-10-${String(n).padStart(2, '0')} 09:00:00 UTC,,"Message ${n}, with a comma",INBOX\n`;
const messageCount = (caseId: string) => async (tx: Tx) =>
  (await tx.select({ n: count() }).from(networkMessages).where(eq(networkMessages.caseId, caseId)))[0]!.n;

describe('messages.csv import in batches', () => {
  it('commits batches of rows, merges a conversation across them, and resumes by passing over the rows already read', async () => {
    // Prepare: conversation c1 spans both batches and gets its title from a row of the second
    const s = await caseWithOwner();
    const file = write(
      'messages.csv',
      CSV_HEADER + [1, 2, 3, 4].map((n) => csvRow(n)).join('') + csvRow(5, 'c1', 'Hiring') + csvRow(6, 'c2', 'Other'),
    );
    const first = newRun();
    const target = { profileName: 'Ann Lee' };
    // Act: paused after the first batch
    const paused = await importNetworkMessagesStream(
      options(s, file, first, { batchSize: 3, target, shouldPause: () => true, countRows: messageCount(s.caseId) }),
    );
    // Assess
    expect(paused).toMatchObject({ read: 3, imported: 3, finished: false, position: { itemIndex: 3 } });
    expect(first.batches).toEqual([expect.objectContaining({ read: 3, imported: 3, rowsInTransaction: 3 })]);
    // Act: resumed (the CSV is read from its start, the first three rows passed over), then again whole
    const second = newRun();
    const resumed = await importNetworkMessagesStream(
      options(s, file, second, { batchSize: 3, target, from: paused.position }),
    );
    const again = await importNetworkMessagesStream(options(s, file, newRun(), { batchSize: 3, target }));
    // Assess
    expect(second.opened).toEqual([0]);
    expect(resumed).toMatchObject({ read: 3, imported: 3, skipped: 0, finished: true, position: { itemIndex: 6 } });
    expect(again).toMatchObject({ read: 6, imported: 0, skipped: 6 });
    const messages = await db().select().from(networkMessages).where(eq(networkMessages.caseId, s.caseId));
    expect(messages.map((m) => m.from).sort()).toEqual([1, 2, 3, 4, 5, 6].map((n) => `Person ${n}`));
    const conversations = await db()
      .select()
      .from(networkConversations)
      .where(eq(networkConversations.caseId, s.caseId))
      .orderBy(asc(networkConversations.externalId));
    expect(conversations.map((c) => [c.externalId, c.title, [...c.participants].sort()])).toEqual([
      ['c1', 'Hiring', ['Ann Lee', 'Person 1', 'Person 2', 'Person 3', 'Person 4', 'Person 5']],
      ['c2', 'Other', ['Ann Lee', 'Person 6']],
    ]);
    const events = await auditEventsOf(s.organizationId, 'evidence.network_messages.imported');
    expect(events.map((event) => [event.metadata.firstItemIndex, event.metadata.imported])).toEqual([
      [0, 3],
      [3, 3],
    ]);
  });

  it('a DATE that is not a date fails naming its line, after the rows before it are committed', async () => {
    const s = await caseWithOwner();
    const file = write(
      'messages.csv',
      `${CSV_HEADER}${[1, 2, 3, 4].map((n) => csvRow(n)).join('')}c1,,Bob,Ann,yesterday,,Hi,INBOX\n${csvRow(6)}`,
    );
    const run = newRun();
    const error = await importNetworkMessagesStream(
      options(s, file, run, { batchSize: 3, target: { profileName: 'Ann Lee' } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedImportError);
    expect(error).toMatchObject({ itemIndex: 4, message: 'Line 6: DATE "yesterday" is not a date' });
    expect(run.batches.map((batch) => batch.next.itemIndex)).toEqual([3, 4]);
    expect(await messageCount(s.caseId)(db() as unknown as Tx)).toBe(4);
  });

  it('a row the CSV parser cannot read fails naming its line; a header without the required columns fails at once', async () => {
    const s = await caseWithOwner();
    const target = { profileName: 'Ann Lee' };
    const unclosed = write(
      'messages.csv',
      `${CSV_HEADER}${csvRow(1)}${csvRow(2)}c1,,Bob,Ann,2026-10-03 09:00:00 UTC,,"never closed,INBOX\n`,
    );
    const error = await importNetworkMessagesStream(options(s, unclosed, newRun(), { target })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MalformedImportError);
    expect(error).toMatchObject({ itemIndex: 2, message: expect.stringMatching(/^Line 4: .*quote/) });
    expect(await messageCount(s.caseId)(db() as unknown as Tx)).toBe(2);

    const headless = write('messages.csv', 'FROM,TO,CONTENT\nAnn,Bob,Hi\n');
    expect(
      await importNetworkMessagesStream(options(s, headless, newRun(), { target })).catch((e: unknown) => e),
    ).toMatchObject({
      itemIndex: 0,
      message: 'Line 1: messages.csv lacks the columns CONVERSATION ID, DATE',
    });
  });

  it('needs the profile the messages go to', async () => {
    const s = await caseWithOwner();
    const file = write('messages.csv', CSV_HEADER + csvRow(1));
    await expect(importNetworkMessagesStream(options(s, file, newRun()))).rejects.toThrow('needs the profile');
    await expect(importSupportTicketsStream(options(s, file, newRun()))).rejects.toThrow('needs the profile');
  });
});

const ticket = (id: number | null, extra: Record<string, unknown> = {}) => ({
  ...(id === null ? {} : { id }),
  subject: `Ticket ${id}`,
  status: 'open',
  comments: [{ author: 'agent', body: `About ${id}` }],
  ...extra,
});
const ticketIds = async (caseId: string) =>
  (await db().select({ id: supportTickets.ticketId }).from(supportTickets).where(eq(supportTickets.caseId, caseId)))
    .map((row) => row.id)
    .sort((a, b) => a - b);

describe('support ticket import in batches', () => {
  it.each([
    ['an array', (tickets: unknown[]) => JSON.stringify(tickets, null, 2)],
    [
      'a "tickets" array among metadata',
      (tickets: unknown[]) => JSON.stringify({ count: 5, tickets, next_page: null, meta: { more: false } }),
    ],
    [
      'an object keyed by id',
      (tickets: unknown[]) =>
        JSON.stringify(Object.fromEntries(tickets.map((t) => [String((t as { id: number }).id), t]))),
    ],
  ])('streams the tickets of %s in batches, pauses and resumes', async (_shape, format) => {
    // Prepare
    const s = await caseWithOwner();
    const tickets = [11, 12, 13, 14, 15].map((id) => ticket(id));
    const file = write('tickets.json', format(tickets));
    const target = { profileName: 'ann#0001' };
    const first = newRun();
    // Act
    const paused = await importStream(
      'chat-platform',
      options(s, file, first, { batchSize: 2, target, shouldPause: () => first.batches.length === 2 }),
    );
    const resumed = await importStream(
      'chat-platform',
      options(s, file, newRun(), { batchSize: 2, target, from: paused.position }),
    );
    // Assess
    expect(paused).toMatchObject({ read: 4, imported: 4, finished: false, position: { itemIndex: 4 } });
    expect(resumed).toMatchObject({ read: 1, imported: 1, skipped: 0, finished: true, position: { itemIndex: 5 } });
    expect(await ticketIds(s.caseId)).toEqual([11, 12, 13, 14, 15]);
    // Each ticket hashes as the RFC 8785 JSON of the ticket as the file has it
    const [row] = await db()
      .select()
      .from(supportTickets)
      .where(and(eq(supportTickets.caseId, s.caseId), eq(supportTickets.ticketId, 13)));
    expect(row!.sha256).toBe(
      sha256('{"comments":[{"author":"agent","body":"About 13"}],"id":13,"status":"open","subject":"Ticket 13"}'),
    );
  });

  it('a ticket without a numeric id fails naming it, after the tickets before it are committed', async () => {
    const s = await caseWithOwner();
    const file = write('tickets.json', JSON.stringify([ticket(1), ticket(2), ticket(null), ticket(4)]));
    const run = newRun();
    const error = await importSupportTicketsStream(
      options(s, file, run, { batchSize: 2, target: { profileName: 'p' } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedImportError);
    expect(error).toMatchObject({ itemIndex: 2, message: 'Ticket 3: no numeric id' });
    expect(run.batches.map((batch) => batch.next.itemIndex)).toEqual([2]);
    expect(await ticketIds(s.caseId)).toEqual([1, 2]);
  });

  it('JSON that breaks off inside a ticket fails naming the ticket, line and column; the tickets before it are in', async () => {
    // Prepare: ticket 4's subject is not closed (a comma where a quote belongs), all in one read chunk
    const s = await caseWithOwner();
    const text = JSON.stringify([ticket(1), ticket(2), ticket(3)], null, 1).replace(
      /\n]$/,
      ',\n {"id": 4, "subject": "Ticket 4" "status": "open"}\n]',
    );
    const file = write('tickets.json', text);
    const run = newRun();
    // Act
    const error = await importSupportTicketsStream(
      options(s, file, run, { batchSize: 2, target: { profileName: 'p' } }),
    ).catch((e: unknown) => e);
    // Assess: the three whole tickets read before the error in the same chunk are committed
    expect(error).toBeInstanceOf(MalformedImportError);
    const line = text.split('\n').findIndex((l) => l.includes('"id": 4')) + 1;
    const column = text.split('\n')[line - 1]!.indexOf('"status"') + 1;
    expect(error).toMatchObject({
      itemIndex: 3,
      message: `Ticket 4: the file is not valid JSON at line ${line}, column ${column}: Parser cannot parse input: expected ','`,
    });
    expect(run.batches.map((batch) => batch.next.itemIndex)).toEqual([2, 3]);
    expect(await ticketIds(s.caseId)).toEqual([1, 2, 3]);
  });

  it('a file of none of the three shapes is malformed', async () => {
    const s = await caseWithOwner();
    const file = write('tickets.json', '"tickets"');
    expect(
      await importSupportTicketsStream(options(s, file, newRun(), { target: { profileName: 'p' } })).catch(
        (e: unknown) => e,
      ),
    ).toMatchObject({
      itemIndex: 0,
      message: expect.stringContaining('not an array of tickets'),
    });
    const scalars = write('tickets.json', '[1, 2]');
    expect(
      await importSupportTicketsStream(options(s, scalars, newRun(), { target: { profileName: 'p' } })).catch(
        (e: unknown) => e,
      ),
    ).toMatchObject({
      itemIndex: 0,
      message: 'Ticket 1: not a ticket: Invalid input: expected object, received number',
    });
    expect(await ticketIds(s.caseId)).toEqual([]);
  });
});
