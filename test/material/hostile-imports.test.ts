import type { Server } from 'node:http';
import { Readable } from 'node:stream';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { attachments, emails, networkMessages, supportTickets } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { FILE_START, importStream, MalformedImportError } from '../../lib/material/importers';
import { IMPORT_LIMITS } from '../../lib/material/importers/limits';
import { MboxHeaderTooLargeError, mboxMessages } from '../../lib/material/importers/readers/mbox';
import { keySafe } from '../../lib/material/uploads';
import { uploadHeaders } from '../harness/uploads';
import { objectStorage } from '../../lib/storage';
import { expectData, invoke } from '../harness/invoke';
import { mailSink } from '../harness/setup';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29, items 2 and 7 and the item cap: a hostile file (a quote that never closes, one huge
 * JSON string, a header that never ends, a row of endless commas) fails MALFORMED_FILE naming its
 * item, after reading little more than the item's limit; a name from the other side (an attachment
 * of 300 or 1,100 characters, multibyte) never breaks the import; IMPORT_MAX_ITEMS stops an import
 * with TOO_MANY_ITEMS. Through the real routes and worker, files sized just over the limits.
 */

let server: Server;
let base: string;

beforeAll(async () => {
  server = createLocalServer({ mailSink });
  base = await listen(server, 0);
});

afterEach(() => drainLocalImports());

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;
type Kind = 'email' | 'professional-network' | 'chat-platform';

const MiB = 1024 ** 2;
const CONTENT_TYPES: Record<Kind, string> = {
  email: 'application/mbox',
  'professional-network': 'text/csv',
  'chat-platform': 'application/json',
};

const asOwner = (s: Setup) => ({ token: s.owner.accessToken, organization: s.organizationId });

/** Create, upload (the local server's stand-in for a presigned PUT), start, and wait for the worker. */
async function importThrough(s: Setup, kind: Kind, body: string | Buffer) {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const created = expectData(
    await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: {
        kind,
        fileName: `hostile.${kind === 'email' ? 'mbox' : kind === 'chat-platform' ? 'json' : 'csv'}`,
        contentType: CONTENT_TYPES[kind],
        sizeBytes: bytes.length,
        ...(kind === 'email' ? {} : { profile: 'ann.lee' }),
      },
    }),
    201,
  );
  const link = new URL(created.upload.url);
  const { 'content-length': _length, ...headers } = created.upload.headers as Record<string, string>;
  const put = await fetch(`${base}${link.pathname}${link.search}`, {
    method: 'PUT',
    headers: uploadHeaders(headers, bytes),
    body: bytes,
  });
  expect(put.status, await put.text()).toBe(200);
  expectData(
    await invoke(routes.startImport, { ...asOwner(s), path: { caseId: s.caseId, importId: created.import.id } }),
    202,
  );
  await drainLocalImports();
  return expectData(
    await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId: created.import.id } }),
  );
}

const countOf = async (kind: Kind, caseId: string) => {
  const table = kind === 'email' ? emails : kind === 'professional-network' ? networkMessages : supportTickets;
  return (await db().select({ id: table.id }).from(table).where(eq(table.caseId, caseId))).length;
};

const message = (id: string, headers = '') =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nFrom: ann@lee-law.example\nTo: bob@roe.example\nSubject: ${id}\n${headers}\n${id} body.\n\n`;

const CSV_HEADER = 'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER';
const csvRow = (n: number) => `c${n},Offer,Ann Lee,Bob Roe,2026-11-02 10:0${n}:00 UTC,Offer,Terms ${n},INBOX`;

/** A folded header line by line until it passes `bytes`: no empty line ends it. */
const foldedHeader = (bytes: number) =>
  `X-Long: start\n${' folded continuation of the header\n'.repeat(Math.ceil(bytes / 34))}`;

describe('a file that would grow memory without bound fails MALFORMED_FILE naming its item', () => {
  const cases_: Array<{ kind: Kind; what: string; body: () => string; itemIndex: number; names: RegExp[] }> = [
    {
      kind: 'professional-network',
      what: 'a CSV quote that never closes',
      body: () =>
        `${[CSV_HEADER, csvRow(1), csvRow(2)].join('\n')}\nc3,Offer,Ann Lee,Bob Roe,2026-11-02 10:03:00 UTC,Offer,"never closed ${'x'.repeat(IMPORT_LIMITS.csvRecordChars)}\n${csvRow(4)}\n`,
      itemIndex: 2,
      names: [/^Line 4:/, /longer than 4 MiB/],
    },
    {
      kind: 'professional-network',
      what: 'a CSV header whose quote never closes',
      body: () => `CONVERSATION ID,"${'h'.repeat(IMPORT_LIMITS.csvRecordChars)}\n${csvRow(1)}\n`,
      itemIndex: 0,
      names: [/^Line 1:/, /longer than 4 MiB/],
    },
    {
      kind: 'professional-network',
      what: 'a CSV row of endless empty fields',
      // Longer than a chunk of the file (64 KiB): the fields of the row being read are counted between chunks.
      body: () =>
        `${[CSV_HEADER, csvRow(1)].join('\n')}\nc2,${','.repeat(IMPORT_LIMITS.csvFields + 2 * 64 * 1024)}\n${csvRow(3)}\n`,
      itemIndex: 1,
      names: [/^Line 3:/, /more than 10,000 fields/],
    },
    {
      kind: 'chat-platform',
      what: 'one JSON string over its limit',
      body: () =>
        JSON.stringify([
          { id: 1, subject: 'One' },
          { id: 2, subject: 'Two' },
          { id: 3, subject: 'x'.repeat(IMPORT_LIMITS.jsonValueChars + 1) },
          { id: 4, subject: 'Four' },
        ]),
      itemIndex: 2,
      names: [/^Ticket 3: a string longer than 8 MiB$/],
    },
    {
      kind: 'chat-platform',
      what: 'one ticket over its limit, of strings each under theirs',
      body: () =>
        JSON.stringify({
          tickets: [
            { id: 1, subject: 'One' },
            {
              id: 2,
              comments: Array.from({ length: IMPORT_LIMITS.jsonTicketChars / MiB + 1 }, () => ({
                body: 'y'.repeat(MiB),
              })),
            },
          ],
        }),
      itemIndex: 1,
      names: [/^Ticket 2:/, /larger than 16 MiB/],
    },
    {
      kind: 'email',
      what: 'an mbox header folded past its limit',
      body: () =>
        `${message('one')}${message('two')}${message('three', foldedHeader(IMPORT_LIMITS.emailHeaderBytes + 1024))}`,
      itemIndex: 2,
      names: [/^Message 3 \(byte \d+\)/, /header block is longer than 1 MiB/],
    },
    {
      kind: 'email',
      what: 'an .eml header folded past its limit',
      body: () => `Subject: one\n${foldedHeader(IMPORT_LIMITS.emailHeaderBytes + 1024)}\nbody\n`,
      itemIndex: 0,
      names: [/^Message 1:/, /header block is longer than 1 MiB/],
    },
  ];
  for (const { kind, what, body, itemIndex, names } of cases_) {
    it(`${kind}: ${what}`, async () => {
      const s = await caseWithOwner();
      const failed = await importThrough(s, kind, body());
      expect(failed).toMatchObject({
        status: 'failed',
        error: { code: 'MALFORMED_FILE', itemIndex },
        progress: { itemsImported: itemIndex },
      });
      for (const name of names) expect(failed.error.message).toMatch(name);
      expect(await countOf(kind, s.caseId)).toBe(itemIndex);
    });
  }
});

it('an error message quotes at most 200 characters of the file', async () => {
  const s = await caseWithOwner();
  const failed = await importThrough(
    s,
    'professional-network',
    `${CSV_HEADER}\nc1,,Ann,Bob,${'9'.repeat(100_000)},,Hi,INBOX\n`,
  );
  expect(failed).toMatchObject({ status: 'failed', error: { code: 'MALFORMED_FILE', itemIndex: 0 } });
  expect(failed.error.message).toMatch(/^Line 2: DATE "9{200}… \(100,000 characters\)" is not a date$/);
});

/** An endless stream of `piece` after `head`, counting the bytes handed out. */
function endless(head: string, piece: string) {
  const counter = { bytes: 0 };
  const chunk = Buffer.from(piece.repeat(Math.ceil((64 * 1024) / piece.length)));
  let first = true;
  const stream = new Readable({
    read() {
      const next = first ? Buffer.from(head) : chunk;
      first = false;
      counter.bytes += next.length;
      this.push(next);
    },
  });
  return { stream, counter };
}

describe('an endless item is refused within a few chunks of its limit (memory never grows past it)', () => {
  const cases_: Array<{ kind: Kind; head: string; piece: string; limit: number }> = [
    {
      kind: 'professional-network',
      head: `${CSV_HEADER}\n${csvRow(1)}\nc2,,A,B,2026-11-02 10:00:00 UTC,,"`,
      piece: 'never closed ',
      limit: IMPORT_LIMITS.csvRecordChars,
    },
    {
      kind: 'chat-platform',
      head: '[{"id": 1}, {"id": 2, "subject": "',
      piece: 'endless ',
      limit: IMPORT_LIMITS.jsonValueChars,
    },
    {
      kind: 'email',
      head: `${message('one')}From x\nSubject: s\n`,
      piece: ' folded\n',
      limit: IMPORT_LIMITS.emailHeaderBytes,
    },
  ];
  for (const { kind, head, piece, limit } of cases_) {
    it(`${kind}`, async () => {
      const s = await caseWithOwner();
      const { stream, counter } = endless(head, piece);
      const error = await importStream(kind, {
        target: {
          caseId: s.caseId,
          organizationId: s.organizationId,
          importSource: 'endless',
          importedById: s.owner.id,
          profileName: 'ann.lee',
        },
        open: async () => stream,
        from: FILE_START,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MalformedImportError);
      expect(error).toMatchObject({ code: 'MALFORMED_FILE', itemIndex: 1 });
      expect(counter.bytes).toBeGreaterThan(limit);
      expect(counter.bytes).toBeLessThan(limit + MiB);
    });
  }

  it('the mbox reader stops at the header limit, not at the message limit', async () => {
    const { stream, counter } = endless('From x\nSubject: s\n', ' folded\n');
    const read = async () => {
      for await (const _ of mboxMessages(stream, 0, 64 * MiB, MiB));
    };
    await expect(read()).rejects.toBeInstanceOf(MboxHeaderTooLargeError);
    expect(counter.bytes).toBeLessThan(MiB + 256 * 1024);
  });
});

/** An mbox message with one attachment per name (RFC 2231 UTF-8 file names, so any character goes). */
function withAttachments(id: string, names: string[]) {
  const parts = names.map(
    (name) =>
      `--b\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename*=UTF-8''${encodeURIComponent(name)}\nContent-Transfer-Encoding: base64\n\n${Buffer.from(`bytes of ${name.length}`).toString('base64')}\n`,
  );
  return `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nFrom: ann@lee-law.example\nTo: bob@roe.example\nSubject: ${id}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\nSee attached.\n${parts.join('')}--b--\n\n`;
}

describe('names from the other side never break an import', () => {
  it('attachments named with 300 and 1,100 characters, and multibyte, import with bounded distinct keys and their names in full', async () => {
    const s = await caseWithOwner();
    const prefix = 'Settlement agreement between the parties '.repeat(5);
    const names = [
      `${prefix}${'a'.repeat(300 - prefix.length - 5)}1.pdf`,
      `${prefix}${'a'.repeat(300 - prefix.length - 5)}2.pdf`,
      `${'b'.repeat(1_096)}.pdf`,
      `${'契約書-Zoë-Müller-'.repeat(40)}.docx`,
    ];
    const done = await importThrough(
      s,
      'email',
      `${withAttachments('first', names.slice(0, 2))}${withAttachments('second', names.slice(2))}`,
    );
    expect(done).toMatchObject({ status: 'succeeded', error: null, progress: { itemsImported: 2 } });
    const ids = (await db().select({ id: emails.id }).from(emails).where(eq(emails.caseId, s.caseId))).map((e) => e.id);
    const rows = await db().select().from(attachments).where(inArray(attachments.emailId, ids));
    expect(rows.map((row) => row.name).sort()).toEqual([...names].sort());
    const keys = rows.map((row) => row.providerId);
    expect(new Set(keys).size).toBe(4);
    for (const key of keys) {
      expect(Buffer.byteLength(key)).toBeLessThanOrEqual(1024);
      for (const segment of key.split('/')) expect(Buffer.byteLength(segment)).toBeLessThanOrEqual(255);
      expect(await objectStorage().read(key)).not.toBeNull();
    }
  });

  it('keySafe bounds a name, keeps its extension and tells apart long names that begin alike', () => {
    const long = (n: number) => `${'x'.repeat(200)}${n}.pdf`;
    expect(keySafe(long(1))).not.toBe(keySafe(long(2)));
    for (const name of [long(1), 'é'.repeat(1_100), `${'y'.repeat(2_000)}.tar`]) {
      const key = keySafe(name);
      expect(key.length).toBeLessThanOrEqual(IMPORT_LIMITS.keyNameChars);
      expect(Buffer.byteLength(key)).toBe(key.length);
    }
    expect(keySafe(long(1))).toMatch(/~[0-9a-f]{8}\.pdf$/);
    expect(keySafe('Offer letter.pdf')).toBe('Offer_letter.pdf');
  });
});

describe('IMPORT_MAX_ITEMS', () => {
  const files: Record<Kind, string> = {
    email: `${message('one')}${message('two')}${message('three')}`,
    'professional-network': [CSV_HEADER, csvRow(1), csvRow(2), csvRow(3)].join('\n'),
    'chat-platform': JSON.stringify([{ id: 1 }, { id: 2 }, { id: 3 }]),
  };
  for (const kind of ['email', 'professional-network', 'chat-platform'] as const) {
    it(`${kind}: one item over the cap fails TOO_MANY_ITEMS naming it, after committing those before`, async () => {
      const s = await caseWithOwner();
      const restore = overrideConfig({ IMPORT_MAX_ITEMS: 2 });
      try {
        const failed = await importThrough(s, kind, files[kind]);
        expect(failed).toMatchObject({
          status: 'failed',
          error: { code: 'TOO_MANY_ITEMS', itemIndex: 2 },
          progress: { itemsImported: 2 },
        });
        expect(failed.error.message).toMatch(/more than 2 items/);
        expect(await countOf(kind, s.caseId)).toBe(2);
        overrideConfig({ IMPORT_MAX_ITEMS: 3 });
        expect(await importThrough(s, kind, files[kind])).toMatchObject({
          status: 'succeeded',
          progress: { itemsRead: 3, itemsImported: 1 },
        });
      } finally {
        restore();
      }
    });
  }
});
