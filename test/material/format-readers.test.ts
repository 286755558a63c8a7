import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '../../lib/db/client';
import { FILE_START, type ImportFile, type ImportPosition, MalformedImportError } from '../../lib/material/importers';
import { readEmails } from '../../lib/material/importers/readers/email';
import { readNetworkMessages } from '../../lib/material/importers/readers/messages-csv';
import { readTickets } from '../../lib/material/importers/readers/tickets-json';

/**
 * Issue 33: the format readers (lib/material/importers/readers/) read and parse, and write
 * nothing: here they read the fixture files alone. The harness opens a database for every test
 * file (test/harness/setup.ts); this file closes it before any test runs, so a reader that
 * reached for the database would fail here ("Database not connected").
 */

beforeAll(async () => {
  await closeDb();
});

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'evidence', name);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A fixture file as a reader opens it: from any byte, starting at `from`. */
const fileOf = (path: string, from: ImportPosition = FILE_START): ImportFile => ({
  open: async (start) => createReadStream(path, { start }),
  from,
});

/** Bytes in memory as a reader opens a file. */
const bytesOf = (bytes: Buffer, from: ImportPosition = FILE_START): ImportFile => ({
  open: async (start) => Readable.from([bytes.subarray(start)]),
  from,
});

const attachmentKey = (emailId: string, keyName: string) => `cases/case-id/emails/${emailId}/${keyName}`;

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const read: T[] = [];
  for await (const item of items) read.push(item);
  return read;
}

/** The two .eml fixtures as an mbox writes them. */
function mboxOfFixtures(): { mbox: Buffer; secondAt: number } {
  const first = Buffer.concat([
    Buffer.from('From ann@lee-law.example Mon Nov  2 10:00:00 2026\n'),
    readFileSync(fixture('settlement.eml')),
    Buffer.from('\n'),
  ]);
  const second = Buffer.concat([
    Buffer.from('From bob@roe.example Tue Nov  3 10:00:00 2026\n'),
    readFileSync(fixture('reply.eml')),
    Buffer.from('\n'),
  ]);
  return { mbox: Buffer.concat([first, second]), secondAt: first.length };
}

describe('the readers run without a database', () => {
  it('has none open in this file', () => {
    expect(() => db()).toThrow(/not connected/);
  });
});

describe('readEmails', () => {
  it('reads an .eml fixture as one message: fields, thread key, attachment bytes and hashes', async () => {
    // Prepare
    const path = fixture('settlement.eml');
    // Act
    const read = await all(readEmails(fileOf(path), attachmentKey));
    // Assess
    expect(read).toHaveLength(1);
    const [{ item, next }] = read as [(typeof read)[number]];
    expect(next).toEqual({ byteOffset: statSync(path).size, itemIndex: 1 });
    expect(item.messageId).toBe('<offer@lee-law.example>');
    expect(item.rootId).toBe('<offer@lee-law.example>');
    expect(item.participants).toEqual(['ann@lee-law.example', 'bob@roe.example']);
    expect(item.fields).toMatchObject({
      externalId: '<offer@lee-law.example>',
      subject: 'Settlement offer',
      from: [{ name: 'Ann Lee', email: 'ann@lee-law.example' }],
      to: [{ name: 'Bob Roe', email: 'bob@roe.example' }],
      sha256: sha256(readFileSync(path)),
      sizeBytes: statSync(path).size,
      threadIndex: 0,
    });
    const annex = Buffer.from(
      /Content-Transfer-Encoding: base64\n\n([A-Za-z0-9+/=\n]+)\n--b1--/.exec(readFileSync(path, 'utf8'))![1]!,
      'base64',
    );
    expect(item.attachments).toEqual([
      expect.objectContaining({ name: 'annex.pdf', keyName: '0-annex.pdf', sha256: sha256(annex), size: annex.length }),
    ]);
    expect(item.attachmentBytes).toBe(annex.length);
  });

  it('reads an mbox of the fixtures message by message, each with the checkpoint after it, and resumes there', async () => {
    // Prepare
    const { mbox, secondAt } = mboxOfFixtures();
    // Act
    const read = await all(readEmails(bytesOf(mbox), attachmentKey));
    const resumed = await all(readEmails(bytesOf(mbox, read[0]!.next), attachmentKey));
    // Assess: the reply joins the offer's thread; the checkpoints are the messages' ends
    expect(read.map((r) => [r.item.messageId, r.item.rootId, r.next])).toEqual([
      ['<offer@lee-law.example>', '<offer@lee-law.example>', { byteOffset: secondAt, itemIndex: 1 }],
      ['<reply@roe.example>', '<offer@lee-law.example>', { byteOffset: mbox.length, itemIndex: 2 }],
    ]);
    // Each message hashes as its .eml file
    expect(read[0]!.item.fields.sha256).toBe(sha256(readFileSync(fixture('settlement.eml'))));
    expect(read[1]!.item.fields.sha256).toBe(sha256(readFileSync(fixture('reply.eml'))));
    expect(resumed.map((r) => [r.item.messageId, r.next])).toEqual([
      ['<reply@roe.example>', { byteOffset: mbox.length, itemIndex: 2 }],
    ]);
  });

  it('refuses a message whose attachment key the store would refuse, before anything of it is stored', async () => {
    const tooLong = (emailId: string, keyName: string) => `${'x'.repeat(1024)}/${emailId}/${keyName}`;
    const failure = await all(readEmails(fileOf(fixture('settlement.eml')), tooLong)).catch((error) => error);
    expect(failure).toBeInstanceOf(MalformedImportError);
    expect(failure).toMatchObject({ itemIndex: 0, message: expect.stringContaining('Message 1, attachment 1') });
  });
});

describe('readNetworkMessages', () => {
  it('reads messages.csv row by row into messages of their conversation', async () => {
    // Act
    const read = await all(readNetworkMessages(fileOf(fixture('messages.csv'))));
    // Assess
    expect(read.map((r) => r.next.itemIndex)).toEqual([1, 2]);
    expect(read.map((r) => r.item.conversationId)).toEqual(['conv-1', 'conv-1']);
    expect(read[0]!.item).toMatchObject({
      conversationTitle: 'Offer',
      participants: ['Ann Lee', 'Bob Roe'],
      values: {
        from: 'Ann Lee',
        to: 'Bob Roe',
        date: new Date('2026-11-02T10:00:00Z'),
        subject: 'Offer',
        content: 'Hello Bob, see the offer',
        folder: 'INBOX',
        isDraft: false,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });
    // An empty SUBJECT is no subject; each row is keyed by a hash of its fields
    expect(read[1]!.item.values.subject).toBeNull();
    expect(read[0]!.item.values.externalId).not.toBe(read[1]!.item.values.externalId);
  });

  it('passes over the rows before its start, unparsed into items', async () => {
    const resumed = await all(readNetworkMessages(fileOf(fixture('messages.csv'), { byteOffset: 0, itemIndex: 1 })));
    expect(resumed.map((r) => [r.item.values.from, r.next.itemIndex])).toEqual([['Bob Roe', 2]]);
  });

  it('refuses a file without the required columns, naming line 1', async () => {
    const failure = await all(
      readNetworkMessages(bytesOf(Buffer.from('FROM,DATE\nAnn,2026-11-02 10:00:00 UTC\n'))),
    ).catch((error) => error);
    expect(failure).toBeInstanceOf(MalformedImportError);
    expect(failure.message).toMatch(/^Line 1: messages.csv lacks the columns CONVERSATION ID, CONTENT/);
  });
});

describe('readTickets', () => {
  it('reads the tickets of tickets.json with their comments, its metadata passed over', async () => {
    // Act
    const read = await all(readTickets(fileOf(fixture('tickets.json'))));
    // Assess
    expect(read).toHaveLength(1);
    expect(read[0]!.next.itemIndex).toBe(1);
    expect(read[0]!.item.values).toMatchObject({
      ticketId: 4107,
      subject: 'Account locked',
      status: 'solved',
      ticketCreatedAt: new Date('2026-10-30T09:15:00Z'),
      comments: [
        { author: '88', comment: 'My account is locked.', createdAt: '2026-10-30T09:15:00Z' },
        { author: 'Agent Kim', comment: 'Unlocked, sorry.', createdAt: '2026-10-30T10:02:00Z' },
      ],
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('resumed past its tickets, yields none', async () => {
    expect(await all(readTickets(fileOf(fixture('tickets.json'), { byteOffset: 0, itemIndex: 1 })))).toEqual([]);
  });

  it('refuses a file that is not JSON, naming the line and column', async () => {
    const failure = await all(readTickets(bytesOf(Buffer.from('[{"id": 1},\n  nope]')))).catch((error) => error);
    expect(failure).toBeInstanceOf(MalformedImportError);
    expect(failure).toMatchObject({
      itemIndex: 1,
      message: expect.stringMatching(/^Ticket 2: the file is not valid JSON at line 2, column \d+/),
    });
  });
});
