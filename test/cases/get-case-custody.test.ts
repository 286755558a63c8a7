import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { pdfText } from '../harness/pdf-text';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { runAdminCommand } from '../../lib/admin/cli';
import { eventHash } from '../../lib/audit';
import { addSeconds, now, testClock } from '../../lib/clock';
import { publicBaseUrl } from '../../lib/config';
import { db } from '../../lib/db/client';
import {
  attachments,
  auditChainHeads,
  auditEvents,
  auditReadCounts,
  deviceNotes,
  devices,
  emails,
  evidenceObjects,
  networkMessages,
  supportTickets,
} from '../../lib/db/schema';
import { createUser, signIn, type TestUser } from '../harness/actors';
import { useTemporaryObjectStorage } from '../harness/object-storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { memberWithAccess } from '../harness/cases';
import { seedThread } from '../harness/material';

// Evidence and PDFs go to a directory of this file, never to the repository's .data.
const { storage, root: storageRoot } = useTemporaryObjectStorage('custody-test');

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const HEX64 = /^[0-9a-f]{64}$/;

const write = (name: string, content: Buffer | string) => {
  const path = join(storageRoot, `fixture-${randomBytes(4).toString('hex')}-${name}`);
  writeFileSync(path, content);
  return path;
};

const custody = (user: TestUser, caseId: string, query: Record<string, string> = {}) =>
  invoke(routes.getCaseCustody, { token: user.accessToken, path: { caseId }, query });

async function openCase(owner: TestUser, name = 'Lee v. Roe') {
  const created = expectData(
    await invoke(routes.createCase, { token: owner.accessToken, organization: owner.organizationId, body: { name } }),
    201,
  );
  return created.id as string;
}

const CONTRACT = Buffer.from('Contract between Lee and Roe, signed 2026-10-01.\n');
const EML = [
  'Message-ID: <custody-1@lee-law.example>',
  'Date: Mon, 02 Nov 2026 10:00:00 +0000',
  'From: Ann Lee <ann@lee-law.example>',
  'To: Bob Roe <bob@roe.example>',
  'Subject: The contract',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain',
  '',
  'Attached.',
  '--b1',
  'Content-Type: text/plain; name="contract.txt"',
  'Content-Disposition: attachment; filename="contract.txt"',
  'Content-Transfer-Encoding: base64',
  '',
  CONTRACT.toString('base64'),
  '--b1--',
  '',
].join('\r\n');
const MESSAGES_CSV =
  'CONVERSATION ID,CONVERSATION TITLE,FROM,SENDER PROFILE URL,TO,RECIPIENT PROFILE URLS,DATE,SUBJECT,CONTENT,FOLDER\n' +
  'c1,Hiring,Ann Lee,https://x/ann,Bob Roe,https://x/bob,2026-10-01 09:00:00 UTC,Offer,"We can offer a contract",INBOX\n' +
  'c1,Hiring,Bob Roe,https://x/bob,Ann Lee,https://x/ann,2026-10-02 09:00:00 UTC,,"Contracts look fine",INBOX\n';
const TICKETS = JSON.stringify({
  '17': {
    id: 17,
    subject: 'Account locked',
    status: 'closed',
    created_at: '2026-09-01T00:00:00Z',
    comments: [{ author: 'agent', comment: 'Password reset sent', created_at: '2026-09-01T01:00:00Z' }],
  },
});
const PHOTO = randomBytes(2048);

/** A case with one of every kind of evidence, imported the ways the product imports it. */
async function importedCase(name = 'Lee v. Roe') {
  const owner = await createUser();
  const caseId = await openCase(owner, name);
  const cli = (args: string[]) => runAdminCommand(args, () => {});
  expect(await cli(['import', 'email', '--case', caseId, write('contract.eml', EML)])).toBe(0);
  expect(
    await cli([
      'import',
      'professional-network',
      '--case',
      caseId,
      '--profile',
      'Ann Lee',
      write('messages.csv', MESSAGES_CSV),
    ]),
  ).toBe(0);
  expect(
    await cli(['import', 'chat-platform', '--case', caseId, '--profile', 'ann#0001', write('tickets.json', TICKETS)]),
  ).toBe(0);
  const photoKey = `cases/${caseId}/notes/${randomBytes(4).toString('hex')}-photo.jpg`;
  await storage.put(photoKey, PHOTO);
  expectData(
    await invoke(routes.importCaseNotes, {
      token: owner.accessToken,
      organization: owner.organizationId,
      query: { caseId },
      body: {
        deviceId: 'ann-iphone',
        deviceType: 'ios',
        deviceMetadata: {},
        systemId: 'sys-1',
        appVersion: '3.2.0',
        osDetails: { cpus: {}, extraInformation: {} },
        notes: [
          { id: 1, title: 'Meeting', htmlContent: '<p>Met Bob</p>', attachments: [photoKey] },
          { id: 2, title: 'Call', attachments: [photoKey] },
        ],
      },
    }),
  );
  return { owner, caseId, photoKey };
}

describe('GET /cases/{caseId}/custody', () => {
  it('lists every imported item with its kind, source and importer, and the rows as stored', async () => {
    // Prepare
    const { owner, caseId, photoKey } = await importedCase();

    // Act
    const data = expectData(await custody(owner, caseId));

    // Assess
    expect(Object.keys(data)).toEqual([
      'caseId',
      'generatedAt',
      'itemCount',
      'eventCount',
      'chainHead',
      'items',
      'events',
    ]);
    expect(data.caseId).toBe(caseId);
    expect(data.items.data.map((item: any) => item.kind)).toEqual([
      'email',
      'attachment',
      'network_message',
      'network_message',
      'support_ticket',
      'device_note',
      'device_note',
      'note_attachment',
      // The three files the admin command imported them from, kept as source evidence.
      'import_file',
      'import_file',
      'import_file',
    ]);
    const byKind = (kind: string) => data.items.data.filter((item: any) => item.kind === kind);

    const [email] = await db().select().from(emails).where(eq(emails.caseId, caseId));
    const [file] = await db().select().from(attachments).where(eq(attachments.emailId, email!.id));
    expect(byKind('email')).toEqual([
      {
        kind: 'email',
        id: email!.id,
        sha256: email!.sha256,
        sizeBytes: email!.sizeBytes,
        source: email!.importSource,
        importedAt: email!.createdAt.toISOString(),
        importedBy: email!.importedById,
      },
    ]);
    expect(byKind('attachment')).toEqual([
      {
        kind: 'attachment',
        id: file!.id,
        sha256: expect.toSatisfy((hash) => hash === null || hash === sha256(CONTRACT)),
        sizeBytes: CONTRACT.length,
        source: email!.importSource,
        importedAt: file!.createdAt.toISOString(),
        importedBy: email!.importedById,
      },
    ]);
    // Hashes the importers record are those of the source bytes (sha256sum of the fixture).
    expect([null, sha256(EML)]).toContain(email!.sha256);

    const messages = await db()
      .select()
      .from(networkMessages)
      .where(eq(networkMessages.caseId, caseId))
      .orderBy(asc(networkMessages.createdAt), asc(networkMessages.id));
    expect(byKind('network_message')).toEqual(
      messages.map((row) => ({
        kind: 'network_message',
        id: row.id,
        sha256: row.sha256,
        sizeBytes: row.sizeBytes,
        source: row.importSource,
        importedAt: row.createdAt.toISOString(),
        importedBy: row.importedById,
      })),
    );
    const [ticket] = await db().select().from(supportTickets).where(eq(supportTickets.caseId, caseId));
    expect(byKind('support_ticket')).toEqual([
      {
        kind: 'support_ticket',
        id: ticket!.id,
        sha256: ticket!.sha256,
        sizeBytes: ticket!.sizeBytes,
        source: ticket!.importSource,
        importedAt: ticket!.createdAt.toISOString(),
        importedBy: ticket!.importedById,
      },
    ]);

    const notes = await db()
      .select()
      .from(deviceNotes)
      .where(eq(deviceNotes.caseId, caseId))
      .orderBy(asc(deviceNotes.createdAt), asc(deviceNotes.id));
    expect(byKind('device_note')).toEqual(
      notes.map((note) => ({
        kind: 'device_note',
        id: note.id,
        sha256: note.sha256,
        sizeBytes: note.sizeBytes,
        source: 'ann-iphone (ios)',
        importedAt: note.createdAt.toISOString(),
        importedBy: owner.id,
      })),
    );
    // Linked by both notes, listed once.
    expect(byKind('note_attachment')).toEqual([
      {
        kind: 'note_attachment',
        id: photoKey,
        sha256: expect.toSatisfy((hash) => hash === null || hash === sha256(PHOTO)),
        sizeBytes: expect.toSatisfy((size) => size === null || size === PHOTO.length),
        source: 'ann-iphone (ios)',
        importedAt: notes[0]!.createdAt.toISOString(),
        importedBy: owner.id,
      },
    ]);
    for (const item of data.items.data) if (item.sha256 !== null) expect(item.sha256).toMatch(HEX64);
  });

  it('reports the hash and size recorded for each item, an attachment falling back to its object', async () => {
    // Prepare: rows written directly, with known hashes.
    const owner = await createUser();
    const caseId = await openCase(owner);
    const { emailIds } = await seedThread(caseId, [{ minute: 1 }, { minute: 2 }]);
    const hashOf = (label: string) => sha256(`${caseId} ${label}`);
    for (const [index, id] of emailIds.entries())
      await db()
        .update(emails)
        .set({
          sha256: hashOf(`email ${index}`),
          sizeBytes: 100 + index,
          importSource: 'box.mbox',
          importedById: owner.id,
        })
        .where(eq(emails.id, id));
    const withHash = `cases/${caseId}/emails/${emailIds[0]}/0-a.pdf`;
    const objectOnly = `cases/${caseId}/emails/${emailIds[0]}/1-b.pdf`;
    await db()
      .insert(attachments)
      .values([
        { emailId: emailIds[0]!, name: 'a.pdf', providerId: withHash, size: 10, sha256: hashOf('a.pdf') },
        { emailId: emailIds[0]!, name: 'b.pdf', providerId: objectOnly, size: 20 },
      ]);
    const [device] = await db()
      .insert(devices)
      .values({ organizationId: owner.organizationId, deviceId: 'pixel-7', deviceType: 'android' })
      .returning();
    const noteKey = `cases/${caseId}/notes/n-scan.png`;
    const unhashedKey = `cases/${caseId}/notes/n-old.png`;
    await db()
      .insert(deviceNotes)
      .values({
        caseId,
        deviceId: device!.id,
        noteId: 1,
        title: 'Scan',
        attachmentKeys: [noteKey, unhashedKey],
        importedById: owner.id,
        sha256: hashOf('note'),
        sizeBytes: 77,
      });
    await db()
      .insert(evidenceObjects)
      .values([
        { key: objectOnly, caseId, sha256: hashOf('b.pdf'), sizeBytes: 20, recordedAt: now() },
        { key: noteKey, caseId, sha256: hashOf('scan'), sizeBytes: 4096, recordedAt: now() },
      ]);

    // Act
    const data = expectData(await custody(owner, caseId));

    // Assess
    const summary = data.items.data.map((item: any) => [item.kind, item.id, item.sha256, item.sizeBytes, item.source]);
    const files = await db()
      .select()
      .from(attachments)
      .where(inArray(attachments.emailId, emailIds))
      .orderBy(asc(attachments.createdAt), asc(attachments.id));
    expect(summary).toEqual([
      ['email', emailIds[0], hashOf('email 0'), 100, 'box.mbox'],
      ['email', emailIds[1], hashOf('email 1'), 101, 'box.mbox'],
      ...files.map((file) => ['attachment', file.id, hashOf(file.name), file.size, 'box.mbox']),
      ['device_note', expect.any(String), hashOf('note'), 77, 'pixel-7 (android)'],
      ['note_attachment', unhashedKey, null, null, 'pixel-7 (android)'],
      ['note_attachment', noteKey, hashOf('scan'), 4096, 'pixel-7 (android)'],
    ]);
    expect(data.items.data.filter((item: any) => item.importedBy !== owner.id)).toEqual([]);
  });

  it("lists the case's audit events oldest first with the organization's chain head, and records the read", async () => {
    // Prepare
    const owner = await createUser();
    const caseId = await openCase(owner, 'Audited v. Case');
    const otherCase = await openCase(owner, 'Other');
    expectData(
      await invoke(routes.updateCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        path: { caseId },
        body: { name: 'Audited v. Case (renamed)' },
      }),
    );

    // Act
    const first = expectData(await custody(owner, caseId));

    // Assess
    expect(first.events.data.map((event: any) => event.action)).toEqual(['case.created', 'case.updated']);
    const rows = await db()
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.organizationId, owner.organizationId), eq(auditEvents.caseId, caseId)))
      .orderBy(asc(auditEvents.sequence));
    expect(first.events.data[0]).toEqual({
      id: rows[0]!.id,
      sequence: rows[0]!.sequence,
      occurredAt: rows[0]!.occurredAt.toISOString(),
      action: 'case.created',
      actor: { type: 'user', userId: owner.id, tokenId: expect.any(String) },
      caseId,
      target: { type: 'case', id: caseId },
      ip: rows[0]!.ip,
      userAgent: 'vitest',
      requestId: rows[0]!.requestId,
      clientRequestId: null,
      metadata: { name: 'Audited v. Case' },
      redacted: false,
      count: 1,
      prevHash: rows[0]!.prevHash,
      hash: rows[0]!.hash,
    });
    // Every field an event's hash covers is there: anyone can recompute it from the answer.
    for (const event of first.events.data)
      expect(
        eventHash({
          ...event,
          organizationId: owner.organizationId,
          occurredAt: new Date(event.occurredAt),
          actorType: event.actor.type,
          actorUserId: event.actor.userId,
          tokenId: event.actor.tokenId,
          targetType: event.target?.type ?? null,
          targetId: event.target?.id ?? null,
        }),
      ).toBe(event.hash);
    expect(first.events.data.some((event: any) => event.caseId === otherCase)).toBe(false);

    // The read is recorded after the answer is built: the head it answered is the one the read chained from.
    const reads = await db()
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.caseId, caseId), eq(auditEvents.action, 'evidence.custody.read')));
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({
      actorUserId: owner.id,
      prevHash: first.chainHead.hash,
      sequence: first.chainHead.sequence + 1,
      metadata: { path: { caseId }, query: {} },
    });
    const [head] = await db()
      .select()
      .from(auditChainHeads)
      .where(eq(auditChainHeads.organizationId, owner.organizationId));
    expect(head).toMatchObject({ sequence: first.chainHead.sequence + 1, hash: reads[0]!.hash });

    const second = expectData(await custody(owner, caseId));
    expect(second.events.data.map((event: any) => event.action)).toEqual([
      'case.created',
      'case.updated',
      'evidence.custody.read',
    ]);
    expect(second.chainHead).toEqual({ sequence: head!.sequence, hash: head!.hash });
  });

  it('stores a PDF that prints the case, the chain head and every hash whole, behind a time-limited link', async () => {
    // Prepare: imported evidence, and enough items with hashes to fill several pages.
    const { owner, caseId } = await importedCase('Lee (Ann) v. Roe \\ Co');
    const { emailIds } = await seedThread(
      caseId,
      Array.from({ length: 150 }, (_, minute) => ({ minute })),
    );
    for (const id of emailIds)
      await db()
        .update(emails)
        .set({ sha256: sha256(id), sizeBytes: 1000, importSource: 'seeded.mbox' })
        .where(eq(emails.id, id));
    const json = expectData(await custody(owner, caseId, { perPage: '1000' }));
    testClock.freeze();
    const at = now();

    // Act
    const data = expectData(await custody(owner, caseId, { format: 'pdf' }));

    // Assess
    expect(data).toEqual({
      caseId,
      generatedAt: at.toISOString(),
      fileName: `custody-${caseId}-${at.toISOString().slice(0, 10)}.pdf`,
      contentType: 'application/pdf',
      sizeBytes: expect.any(Number),
      storageKey: expect.stringMatching(
        new RegExp(`^generated/cases/${caseId}/custody/[0-9a-f-]+/custody-${caseId}-.+\\.pdf$`),
      ),
      itemCount: json.items.data.length,
      eventCount: json.events.data.length + 1,
      chainHead: { sequence: json.chainHead.sequence + 1, hash: expect.stringMatching(HEX64) },
      downloadUrl: expect.stringMatching(new RegExp(`^${publicBaseUrl()}/_local/objects/generated/`)),
      expiresAt: addSeconds(at, 15 * 60).toISOString(),
    });
    const link = new URL(data.downloadUrl);
    const key = decodeURIComponent(link.pathname.replace('/_local/objects/', ''));
    expect(key).toBe(data.storageKey);
    const expires = Number(link.searchParams.get('expires'));
    const downloaded = await storage.readSigned(key, expires, link.searchParams.get('signature')!);
    expect(downloaded?.byteLength).toBe(data.sizeBytes);

    const { pages, text } = await pdfText(downloaded!);
    expect(pages).toBeGreaterThan(3);
    expect(text.startsWith('Chain of custody\n')).toBe(true);
    expect(text).toContain('Case Lee (Ann) v. Roe \\ Co\n');
    expect(text).toContain(caseId);
    expect(text).toContain(`Generated ${at.toISOString()}`);
    expect(text).toContain(data.chainHead.hash);
    const hashes = [
      ...json.items.data.flatMap((item: any) => (item.sha256 ? [item.sha256] : [])),
      ...json.events.data.flatMap((event: any) => [event.hash, event.prevHash]),
    ];
    expect(hashes.length).toBeGreaterThan(150 + 2 * json.events.data.length - 1);
    const missing = hashes.filter((hash: string) => !text.includes(hash));
    expect(missing).toEqual([]);
    // Every item and event, in the answer's order.
    const positions = [
      ...json.items.data.map((item: any) => text.indexOf(`id ${item.id} `)),
      ...json.events.data.map((event: any) => text.indexOf(`#${event.sequence} `)),
    ];
    expect(positions.every((position, index) => position > (positions[index - 1] ?? 0))).toBe(true);

    // The link stops working once it expires; the PDF read was recorded like the JSON one.
    testClock.advance(15 * 60 + 1);
    expect(await storage.readSigned(key, expires, link.searchParams.get('signature')!)).toBeNull();
    const reads = await db()
      .select({ metadata: auditEvents.metadata })
      .from(auditEvents)
      .where(and(eq(auditEvents.caseId, caseId), eq(auditEvents.action, 'evidence.custody.read')))
      .orderBy(asc(auditEvents.sequence));
    expect(reads.map((read) => read.metadata.query)).toEqual([{ perPage: 1000 }, { format: 'pdf' }]);
  });

  it('needs owner or admin access to the case; a bad format is 400 and an unknown case 404', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    const admin = await memberWithAccess(owner.organizationId, caseId, 'admin');
    expectData(await custody(admin, caseId));
    const viewer = await memberWithAccess(owner.organizationId, caseId, 'viewer');
    expectError(await custody(viewer, caseId), 403, 'INSUFFICIENT_ROLE');
    const outsider = await createUser();
    const refused = await custody(outsider, caseId);
    expect([403, 404]).toContain(refused.status);
    expectError(await custody(owner, caseId, { format: 'csv' }), 400, 'VALIDATION_FAILED', ['query.format']);
    expectError(await custody(owner, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    // Only the read let through was recorded.
    const reads = await db()
      .select({ actor: auditEvents.actorUserId })
      .from(auditEvents)
      .where(and(eq(auditEvents.caseId, caseId), eq(auditEvents.action, 'evidence.custody.read')));
    expect(reads.map((read) => read.actor)).toEqual([admin.id]);
  });
});

describeSecurity(routes.getCaseCustody, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });

describe('GET /cases/{caseId}/custody: what reads and clients can put in it (issue 31)', () => {
  const readThread = (user: TestUser, caseId: string, threadId: string, headers: Record<string, string> = {}) =>
    invoke(routes.listThreadEmails, { token: user.accessToken, path: { caseId, threadId }, headers });
  const search = (user: TestUser, caseId: string, searchText: string) =>
    invoke(routes.searchNetworkMessages, { token: user.accessToken, path: { caseId }, query: { searchText } });
  const verify = (user: TestUser) =>
    invoke(routes.verifyAuditChain, { token: user.accessToken, path: { orgId: user.organizationId } });

  it('counts 50 reads of one thread by one user as one event; another user or thread is an event of its own', async () => {
    // Prepare
    const owner = await createUser();
    const caseId = await openCase(owner);
    const admin = await memberWithAccess(owner.organizationId, caseId, 'admin');
    const [first, second] = await Promise.all([
      seedThread(caseId, [{ minute: 1 }]),
      seedThread(caseId, [{ minute: 2 }]),
    ]);
    // Act
    for (let read = 0; read < 50; read += 1) expectData(await readThread(owner, caseId, first!.threadId));
    expectData(await readThread(admin, caseId, first!.threadId));
    expectData(await readThread(owner, caseId, second!.threadId));
    const data = expectData(await custody(owner, caseId));
    // Assess
    const reads = data.events.data
      .filter((event: any) => event.action === 'evidence.thread_emails.read')
      .map((event: any) => [event.actor.userId, event.metadata.path.threadId, event.count]);
    expect(reads).toEqual([
      [owner.id, first!.threadId, 50],
      [admin.id, first!.threadId, 1],
      [owner.id, second!.threadId, 1],
    ]);
    expect(data.events.data.find((event: any) => event.action === 'case.created').count).toBe(1);
    expect(expectData(await verify(owner))).toMatchObject({ valid: true, firstInvalidSequence: null });
  });

  it('counts a repeated read in the same number of queries however many reads came before', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    const { threadId } = await seedThread(caseId, [{ minute: 1 }]);
    expectData(await readThread(owner, caseId, threadId));
    const second = await countQueries(() => readThread(owner, caseId, threadId));
    for (let read = 0; read < 20; read += 1) expectData(await readThread(owner, caseId, threadId));
    const later = await countQueries(() => readThread(owner, caseId, threadId));
    expectData(second.result);
    expectData(later.result);
    expect(later.queries).toBe(second.queries);
    const [row] = await db()
      .select()
      .from(auditReadCounts)
      .where(eq(auditReadCounts.organizationId, owner.organizationId));
    expect(row).toMatchObject({ count: 23 });
  });

  it('records the same read again as a new event once its window (an hour) has passed', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    const { threadId } = await seedThread(caseId, [{ minute: 1 }]);
    testClock.freeze();
    try {
      expectData(await readThread(owner, caseId, threadId));
      testClock.advance(59 * 60);
      expectData(await readThread(await signIn(owner), caseId, threadId));
      testClock.advance(2 * 60);
      const later = await signIn(owner);
      expectData(await readThread(later, caseId, threadId));
      const data = expectData(await custody(later, caseId));
      expect(
        data.events.data.filter((e: any) => e.action === 'evidence.thread_emails.read').map((e: any) => e.count),
      ).toEqual([2, 1]);
      expect(expectData(await verify(later)).valid).toBe(true);
    } finally {
      testClock.reset();
    }
  });

  it("never stores opposing counsel's search text: the parameter names and a SHA-256 of the canonical query", async () => {
    // Prepare
    const owner = await createUser();
    const caseId = await openCase(owner);
    const opposing = await memberWithAccess(owner.organizationId, caseId, 'opposing_counsel', 'client');
    // Act
    expectData(await search(opposing, caseId, 'hidden offshore assets'));
    expectData(await search(owner, caseId, 'hidden offshore assets'));
    const json = expectData(await custody(owner, caseId));
    const pdf = expectData(await custody(owner, caseId, { format: 'pdf' }));
    // Assess
    const [theirs, ours] = json.events.data.filter((e: any) => e.action === 'evidence.network_messages.searched');
    expect(theirs.actor.userId).toBe(opposing.id);
    expect(theirs.metadata).toEqual({
      path: { caseId },
      queryKeys: ['searchText'],
      querySha256: sha256(canonicalize(ours.metadata.query)!),
    });
    expect(ours.metadata.query).toMatchObject({ searchText: 'hidden offshore assets' });
    const rows = await db().select().from(auditEvents).where(eq(auditEvents.id, theirs.id));
    expect(JSON.stringify(rows)).not.toContain('offshore');
    const key = decodeURIComponent(new URL(pdf.downloadUrl).pathname.replace('/_local/objects/', ''));
    const link = new URL(pdf.downloadUrl);
    const bytes = await storage.readSigned(
      key,
      Number(link.searchParams.get('expires')),
      link.searchParams.get('signature')!,
    );
    const { text } = await pdfText(bytes!);
    expect(text).toContain(`querySha256":"${theirs.metadata.querySha256}`);
  });

  it('prints every client-chosen text into the PDF bounded, cut with an ellipsis', async () => {
    // Prepare: a long client request id is refused, a long agent and a long search text are kept bounded.
    const owner = await createUser();
    const caseId = await openCase(owner, `Long ${'n'.repeat(95)}`);
    const agent = `Agent/${'a'.repeat(394)}`;
    const searchText = `terms ${'s'.repeat(190)}`;
    expectData(
      await invoke(routes.searchNetworkMessages, {
        token: owner.accessToken,
        path: { caseId },
        query: { searchText },
        headers: { 'user-agent': agent, 'x-request-id': `client-${'r'.repeat(130)}` },
      }),
    );
    // Act
    const pdf = expectData(await custody(owner, caseId, { format: 'pdf' }));
    const link = new URL(pdf.downloadUrl);
    const key = decodeURIComponent(link.pathname.replace('/_local/objects/', ''));
    const bytes = await storage.readSigned(
      key,
      Number(link.searchParams.get('expires')),
      link.searchParams.get('signature')!,
    );
    const { text } = await pdfText(bytes!);
    // Assess
    expect(text).not.toContain('a'.repeat(200));
    expect(text).toContain(`agent ${agent.slice(0, 117)}...`);
    expect(text).not.toContain('s'.repeat(190));
    expect(text).not.toContain('r'.repeat(120));
    // The metadata printed is cut too (240 characters), where the search text runs on.
    expect(text).toMatch(/s\.\.\.$/m);
  });
});
