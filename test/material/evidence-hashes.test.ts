import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { STAFF_ACTOR, withAuditScope } from '../../lib/audit';
import { db } from '../../lib/db/client';
import {
  attachments,
  deviceNotes,
  emails,
  evidenceObjects,
  networkMessages,
  supportTickets,
} from '../../lib/db/schema';
import { importSupportTicketsJson } from '../../lib/material/importers/chat-platform';
import { importEmailFile } from '../../lib/material/importers/email';
import { mboxMessages } from '../../lib/material/importers/readers/mbox';
import { importNetworkMessagesCsv } from '../../lib/material/importers/professional-network';
import type { TestUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { auditEventsOf } from '../harness/audit';
import { ownDataDir } from '../harness/data-dir';
import { caseWithOwner } from '../harness/cases';
import { extractorDevice, sha256sum, sha256sumOf as sha256sumInDirectory } from '../harness/material';

/**
 * Issue 16: every evidence item records at import the SHA-256 of its source bytes, and the test
 * recomputes each one outside the service, with `sha256sum` over a file holding those bytes.
 */

const FIXTURES = join(import.meta.dirname, 'fixtures', 'evidence');
const fixture = (name: string) => join(FIXTURES, name);

/** Stored attachments go to a directory of this file's own. */
const dataDir = ownDataDir('evidence-hashes-');

/** Writes `bytes` to a temporary file and hashes it with sha256sum. */
const sha256sumOf = (name: string, bytes: Uint8Array | string) => sha256sumInDirectory(dataDir.path, name, bytes);

const asUser = <T>(user: TestUser, work: () => Promise<T>) =>
  withAuditScope(
    { actor: { type: 'user', userId: user.id, tokenId: null }, ip: null, userAgent: null, requestId: null },
    work,
  );

const asStaff = <T>(work: () => Promise<T>) =>
  withAuditScope({ actor: STAFF_ACTOR, ip: null, userAgent: null, requestId: null }, work);

/** The attachment of settlement.eml, decoded here from the fixture's base64 (not by the importer's parser). */
function annexBytes(): Buffer {
  const text = readFileSync(fixture('settlement.eml'), 'utf8');
  const base64 = /Content-Transfer-Encoding: base64\n\n([A-Za-z0-9+/=\n]+)\n--b1--/.exec(text)![1]!;
  return Buffer.from(base64, 'base64');
}

describe('email evidence hashes', () => {
  it('an .eml file: the email hashes as sha256sum of the file, its attachment as sha256sum of its decoded bytes', async () => {
    // Prepare
    const s = await caseWithOwner();
    const file = fixture('settlement.eml');
    // Act
    const summary = await asUser(s.owner, () => importEmailFile(s.caseId, file));
    // Assess: the email
    expect(summary).toMatchObject({ read: 1, imported: 1 });
    const [email] = await db().select().from(emails).where(eq(emails.caseId, s.caseId));
    expect(email).toMatchObject({
      sha256: sha256sum(file),
      sizeBytes: statSync(file).size,
      importSource: 'settlement.eml',
      importedById: s.owner.id,
    });
    // The attachment: its row, and the stored object's record that downloads check
    const annexHash = sha256sumOf('annex.pdf', annexBytes());
    const [annex] = await db().select().from(attachments).where(eq(attachments.emailId, email!.id));
    expect(annex).toMatchObject({ name: 'annex.pdf', sha256: annexHash, size: annexBytes().length });
    const [object] = await db().select().from(evidenceObjects).where(eq(evidenceObjects.key, annex!.providerId));
    expect(object).toMatchObject({ caseId: s.caseId, sha256: annexHash, sizeBytes: annexBytes().length });
    // The stored object is the decoded bytes themselves
    expect(sha256sum(join(dataDir.path, 'objects', ...annex!.providerId.split('/')))).toBe(annexHash);
    // One event for the batch's transaction, naming the file and what it added (the hashes are on the items)
    const events = await auditEventsOf(s.organizationId, 'evidence.emails.imported');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      caseId: s.caseId,
      actorType: 'user',
      actorUserId: s.owner.id,
      metadata: { file: 'settlement.eml', firstItemIndex: 0, read: 1, imported: 1, skipped: 0, attachments: 1 },
    });
  });

  it('email records carry attachments[].sha256', async () => {
    const s = await caseWithOwner();
    await asUser(s.owner, () => importEmailFile(s.caseId, fixture('settlement.eml')));
    const threads = expectData(
      await invoke(routes.listEmailThreads, { token: s.owner.accessToken, path: { caseId: s.caseId } }),
    );
    const page = expectData(
      await invoke(routes.listThreadEmails, {
        token: s.owner.accessToken,
        path: { caseId: s.caseId, threadId: threads.data[0].id },
      }),
    );
    expect(page.data[0].attachments).toEqual([
      expect.objectContaining({ name: 'annex.pdf', sha256: sha256sumOf('annex-record.pdf', annexBytes()) }),
    ]);
  });

  it('an mbox: each message hashes as its .eml did (From_ line and the blank line after it excluded, >From kept)', async () => {
    // Prepare: the two fixtures as an mbox writes them, one with LF and one with CRLF line ends
    const s = await caseWithOwner();
    const settlement = readFileSync(fixture('settlement.eml'));
    const replyCrlf = Buffer.from(readFileSync(fixture('reply.eml'), 'latin1').replace(/\n/g, '\r\n'), 'latin1');
    const replyFile = join(dataDir.path, 'reply-crlf.eml');
    writeFileSync(replyFile, replyCrlf);
    const mbox = join(dataDir.path, 'box.mbox');
    writeFileSync(
      mbox,
      Buffer.concat([
        Buffer.from('From ann@lee-law.example Mon Nov  2 10:00:00 2026\n'),
        settlement,
        Buffer.from('\n'),
        Buffer.from('From bob@roe.example Tue Nov  3 10:00:00 2026\r\n'),
        replyCrlf,
        Buffer.from('\r\n'),
      ]),
    );
    // Act: imported by staff (the admin CLI)
    expect(await asStaff(() => importEmailFile(s.caseId, mbox))).toMatchObject({ read: 2, imported: 2 });
    // Assess
    const rows = await db().select().from(emails).where(eq(emails.caseId, s.caseId));
    const byId = new Map(rows.map((row) => [row.externalId, row]));
    expect(byId.get('<offer@lee-law.example>')).toMatchObject({
      sha256: sha256sum(fixture('settlement.eml')),
      sizeBytes: settlement.length,
      importSource: 'box.mbox',
      importedById: null,
    });
    expect(byId.get('<reply@roe.example>')).toMatchObject({
      sha256: sha256sum(replyFile),
      sizeBytes: replyCrlf.length,
    });
    // The parse is unchanged: mbox's >From quoting is undone in the body, not in the hash
    expect(byId.get('<reply@roe.example>')!.body).toContain('From now on');
    // Both messages commit in one batch: one event
    const events = await auditEventsOf(s.organizationId, 'evidence.emails.imported');
    expect(events.map((event) => [event.actorType, event.metadata.file, event.metadata.imported])).toEqual([
      ['staff', 'box.mbox', 2],
    ]);
    // Re-importing adds nothing and records nothing
    expect(await asStaff(() => importEmailFile(s.caseId, mbox))).toMatchObject({ imported: 0, skipped: 2 });
    expect(await auditEventsOf(s.organizationId, 'evidence.emails.imported')).toHaveLength(1);
  });
});

describe('raw mbox messages', () => {
  it('splits a large mbox read in chunks into the messages as written, separators falling anywhere', async () => {
    // Prepare: three ~200 KB messages, so lines and separators straddle the read stream's 64 KiB chunks
    const messages = [1, 2, 3].map((n) => {
      const body = Array.from({ length: 2000 }, (_, line) => `${n}:${line} ${'x'.repeat(90 + ((line * n) % 17))}`);
      return Buffer.from(`Message-ID: <big-${n}@lee-law.example>\nSubject: Big ${n}\n\n${body.join('\n')}\n`);
    });
    const mbox = join(dataDir.path, 'big.mbox');
    writeFileSync(
      mbox,
      Buffer.concat(
        messages.flatMap((message) => [Buffer.from('From x@y Mon Nov  2 10:00:00 2026\n'), message, Buffer.from('\n')]),
      ),
    );
    // Act
    const raws: Buffer[] = [];
    for await (const message of mboxMessages(createReadStream(mbox))) raws.push(message.raw);
    // Assess
    expect(raws.map((raw) => sha256sumOf('raw.eml', raw))).toEqual(
      messages.map((message, index) => sha256sumOf(`message-${index}.eml`, message)),
    );
  });
});

describe('network message and support ticket hashes', () => {
  it('a CSV row hashes as the RFC 8785 JSON of its header-to-value object', async () => {
    // Prepare
    const s = await caseWithOwner();
    const file = fixture('messages.csv');
    // The first row's canonical JSON, written out by hand: keys sorted, no whitespace
    const firstRow =
      '{"ATTACHMENTS":"","CONTENT":"Hello Bob, see the offer","CONVERSATION ID":"conv-1","CONVERSATION TITLE":"Offer",' +
      '"DATE":"2026-11-02 10:00:00 UTC","FOLDER":"INBOX","FROM":"Ann Lee","SUBJECT":"Offer","TO":"Bob Roe"}';
    // Act
    const summary = await asUser(s.owner, () => importNetworkMessagesCsv(s.caseId, file, 'Ann Lee'));
    // Assess
    expect(summary).toMatchObject({ read: 2, imported: 2 });
    const [first] = await db()
      .select()
      .from(networkMessages)
      .where(eq(networkMessages.content, 'Hello Bob, see the offer'));
    expect(first).toMatchObject({
      sha256: sha256sumOf('row-1.json', firstRow),
      sizeBytes: Buffer.byteLength(firstRow),
      importSource: 'messages.csv',
      importedById: s.owner.id,
    });
    const events = await auditEventsOf(s.organizationId, 'evidence.network_messages.imported');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      caseId: s.caseId,
      metadata: expect.objectContaining({ file: 'messages.csv', read: 2, imported: 2, skipped: 0 }),
    });
    // Nothing new, no event
    await asUser(s.owner, () => importNetworkMessagesCsv(s.caseId, file, 'Ann Lee'));
    expect(await auditEventsOf(s.organizationId, 'evidence.network_messages.imported')).toHaveLength(1);
  });

  it('a ticket hashes as the RFC 8785 JSON of the ticket object as in the file, fields the import ignores included', async () => {
    // Prepare
    const s = await caseWithOwner();
    const file = fixture('tickets.json');
    const ticket =
      '{"comments":[{"author":88,"body":"My account is locked.","created_at":"2026-10-30T09:15:00Z"},' +
      '{"author":"Agent Kim","body":"Unlocked, sorry.","created_at":"2026-10-30T10:02:00Z"}],' +
      '"created_at":"2026-10-30T09:15:00Z","id":4107,"status":"solved","subject":"Account locked","via":{"channel":"web"}}';
    // Act
    expect(await asStaff(() => importSupportTicketsJson(s.caseId, file, 'ann#0001'))).toMatchObject({ imported: 1 });
    // Assess
    const [row] = await db().select().from(supportTickets).where(eq(supportTickets.caseId, s.caseId));
    expect(row).toMatchObject({
      ticketId: 4107,
      sha256: sha256sumOf('ticket.json', ticket),
      sizeBytes: Buffer.byteLength(ticket),
      importSource: 'tickets.json',
      importedById: null,
    });
    const [event] = await auditEventsOf(s.organizationId, 'evidence.support_tickets.imported');
    expect(event).toMatchObject({
      actorType: 'staff',
      metadata: expect.objectContaining({ file: 'tickets.json', imported: 1 }),
    });
  });
});

describe('device note hashes', () => {
  it('a note hashes as the RFC 8785 JSON of the note as sent; the request records one event', async () => {
    // Prepare
    const s = await caseWithOwner();
    const note = { id: 7, title: 'Call with Bob', summary: 'He declined', metadata: { folder: 'Work', pinned: true } };
    // Act
    const result = expectData(
      await invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: { ...extractorDevice('laptop-1'), notes: [note] },
      }),
    );
    // Assess
    expect(result.importedCount).toBe(1);
    const [row] = await db().select().from(deviceNotes).where(eq(deviceNotes.caseId, s.caseId));
    const canonical =
      '{"id":7,"metadata":{"folder":"Work","pinned":true},"summary":"He declined","title":"Call with Bob"}';
    expect(canonicalize(note)).toBe(canonical);
    expect(row).toMatchObject({
      sha256: sha256sumOf('note.json', canonical),
      sizeBytes: Buffer.byteLength(canonical),
      importedById: s.owner.id,
    });
    const events = await auditEventsOf(s.organizationId, 'evidence.notes.imported');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      caseId: s.caseId,
      actorUserId: s.owner.id,
      targetType: 'device',
      targetId: result.deviceRegistrationId,
      metadata: { deviceId: 'laptop-1', imported: 1, skipped: 0, attachments: 0 },
    });
  });
});
