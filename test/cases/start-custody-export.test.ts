import { and, asc, eq, like } from 'drizzle-orm';
import { pdfText } from '../harness/pdf-text';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { auditEvents, custodyExports, emails } from '../../lib/db/schema';
import { custodyLimits } from '../../lib/material/custody';
import {
  drainCustodyExports,
  requeueStalledCustodyExports,
  runCustodyExport,
} from '../../lib/material/custody-exports';
import { createUser, type TestUser } from '../harness/actors';
import { useTemporaryObjectStorage } from '../harness/object-storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { memberWithAccess } from '../harness/cases';
import { seedThread } from '../harness/material';

const { storage } = useTemporaryObjectStorage('custody-export-test');
const limits = { ...custodyLimits };
afterEach(() => Object.assign(custodyLimits, limits));

const start = (user: TestUser, caseId: string) =>
  invoke(routes.startCustodyExport, { token: user.accessToken, path: { caseId } });
const read = (user: TestUser, caseId: string, exportId: string) =>
  invoke(routes.getCustodyExport, { token: user.accessToken, path: { caseId, exportId } });

async function caseWithEmails(count: number) {
  const owner = await createUser();
  const caseId = expectData(
    await invoke(routes.createCase, {
      token: owner.accessToken,
      organization: owner.organizationId,
      body: { name: 'Export v. Case' },
    }),
    201,
  ).id as string;
  const { emailIds } = await seedThread(
    caseId,
    Array.from({ length: count }, (_, minute) => ({ minute })),
  );
  for (const [index, id] of emailIds.entries())
    await db()
      .update(emails)
      .set({ sha256: index.toString(16).padStart(64, 'a'), sizeBytes: 100 + index })
      .where(eq(emails.id, id));
  return { owner, caseId };
}

async function download(url: string): Promise<string> {
  const link = new URL(url);
  const key = decodeURIComponent(link.pathname.replace('/_local/objects/', ''));
  const bytes = await storage.readSigned(
    key,
    Number(link.searchParams.get('expires')),
    link.searchParams.get('signature')!,
  );
  return (await pdfText(bytes!)).text;
}

describe('POST /cases/{caseId}/custody/exports', () => {
  it('queues the export (202), the worker stores the PDF, and the read hands out its link', async () => {
    // Prepare
    const { owner, caseId } = await caseWithEmails(3);

    // Act
    const started = expectData(await start(owner, caseId), 202);
    await drainCustodyExports();
    const done = expectData(await read(owner, caseId, started.id));

    // Assess
    expect(started).toMatchObject({
      caseId,
      status: 'queued',
      progress: { itemsWritten: 0, itemTotal: 3, eventsWritten: 0, eventTotal: 1, percent: 0 },
      volumes: [],
      error: null,
    });
    expect(done).toMatchObject({
      id: started.id,
      status: 'succeeded',
      progress: { itemsWritten: 3, eventsWritten: 1, volumesWritten: 1, percent: 100 },
      chainHead: started.chainHead,
    });
    expect(done.volumes).toEqual([
      {
        volume: 1,
        fileName: expect.stringMatching(/^custody-.+-volume-1\.pdf$/),
        sizeBytes: expect.any(Number),
        items: 3,
        events: 1,
        downloadUrl: expect.any(String),
        expiresAt: expect.any(String),
      },
    ]);
    const text = await download(done.volumes[0].downloadUrl);
    expect(text).toContain('Chain of custody, volume 1');
    expect(text).toContain(started.chainHead.hash);
    expect(text).toContain(`${'a'.repeat(63)}2`);
    const actions = await db()
      .select({ action: auditEvents.action, actor: auditEvents.actorType })
      .from(auditEvents)
      .where(and(eq(auditEvents.caseId, caseId), like(auditEvents.action, 'evidence.custody.%')))
      .orderBy(asc(auditEvents.sequence));
    expect(actions).toEqual([
      { action: 'evidence.custody.export_started', actor: 'user' },
      { action: 'evidence.custody.export_finished', actor: 'system' },
      { action: 'evidence.custody.read', actor: 'user' },
    ]);
  });

  it('answers the same export while nothing it covers changed, and a new one after a change', async () => {
    const { owner, caseId } = await caseWithEmails(2);
    const first = expectData(await start(owner, caseId), 202);
    const again = expectData(await start(owner, caseId), 202);
    expect(again.id).toBe(first.id);
    await drainCustodyExports();
    // Reading it (a custody read) is no change of the evidence: still the same export.
    expectData(await read(owner, caseId, first.id));
    expect(expectData(await start(owner, caseId), 202)).toMatchObject({ id: first.id, status: 'succeeded' });
    expectData(
      await invoke(routes.updateCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        path: { caseId },
        body: { name: 'Export v. Case (renamed)' },
      }),
    );
    const after = expectData(await start(owner, caseId), 202);
    expect(after.id).not.toBe(first.id);
    await drainCustodyExports();
    const started = await db().select().from(custodyExports).where(eq(custodyExports.caseId, caseId));
    expect(started).toHaveLength(2);
  });

  it('splits a big case into volumes, pausing and resuming between them, every record once', async () => {
    // Prepare: volumes of 20 item lines (an event weighs 5), the worker paused after each volume.
    custodyLimits.volumeWeight = 20;
    const { owner, caseId } = await caseWithEmails(90);
    for (let i = 0; i < 3; i += 1)
      expectData(
        await invoke(routes.updateCase, {
          token: owner.accessToken,
          organization: owner.organizationId,
          path: { caseId },
          body: { name: `Export v. Case ${i}` },
        }),
      );
    const [row] = await db().select().from(custodyExports).where(eq(custodyExports.caseId, caseId));
    expect(row).toBeUndefined();
    const started = expectData(await start(owner, caseId), 202);
    await drainCustodyExports();
    // The local run went through; run a fresh export by hand, pausing after every volume.
    expect(expectData(await read(owner, caseId, started.id)).status).toBe('succeeded');
    await db()
      .update(custodyExports)
      .set({
        status: 'queued',
        volumes: [],
        itemsWritten: 0,
        eventsWritten: 0,
        itemCursor: null,
        itemsDone: 0,
        eventCursor: 0,
        attempts: 0,
      })
      .where(eq(custodyExports.id, started.id));
    const outcomes: string[] = [];
    let outcome: string;
    do {
      outcome = await runCustodyExport(started.id, { shouldPause: () => true });
      outcomes.push(outcome);
      if (outcome === 'paused') {
        const partial = expectData(await read(owner, caseId, started.id));
        expect(partial.status).toBe('queued');
        expect(partial.progress.percent).toBeLessThan(100);
        expect(partial.volumes.every((volume: any) => volume.downloadUrl === null)).toBe(true);
      }
    } while (outcome === 'paused');

    // Assess: 90 items and the 4 events up to the head at start (created, 3 renames), in volumes of 20 lines.
    const done = expectData(await read(owner, caseId, started.id));
    expect(outcomes.at(-1)).toBe('succeeded');
    expect(done.progress).toMatchObject({ itemsWritten: 90, itemTotal: 90, eventsWritten: 4, eventTotal: 4 });
    // Five volumes and more: pauses are not attempts (three runs that end unfinished fail an export).
    expect(done.volumes.map((volume: any) => [volume.items, volume.events])).toEqual([
      [20, 0],
      [20, 0],
      [20, 0],
      [20, 0],
      [10, 2],
      [0, 2],
    ]);
    expect(outcomes).toEqual(['paused', 'paused', 'paused', 'paused', 'paused', 'succeeded']);
    const texts = await Promise.all(done.volumes.map((volume: any) => download(volume.downloadUrl)));
    for (const [index, text] of texts.entries()) expect(text).toContain(`Chain of custody, volume ${index + 1}`);
    const all = texts.join('\n');
    for (let index = 0; index < 90; index += 1) {
      const hash = index.toString(16).padStart(64, 'a');
      expect(all.split(hash).length - 1).toBe(1);
    }
  });

  it('takes up again an export whose worker died (its lease lapsed), and fails it after three such runs', async () => {
    // Prepare: two exports left running by dead workers, one with its runs spent; one whose lease still holds.
    const { owner, caseId } = await caseWithEmails(2);
    const started = expectData(await start(owner, caseId), 202);
    await drainCustodyExports();
    const lapsed = new Date(Date.now() - 60_000);
    const [base] = await db().select().from(custodyExports).where(eq(custodyExports.id, started.id));
    const row = (covers: string, attempts: number, leaseUntil: Date) => ({
      ...base!,
      id: undefined as unknown as string,
      covers,
      status: 'running' as const,
      attempts,
      leaseUntil,
      volumes: [],
      itemsWritten: 0,
      eventsWritten: 0,
      itemCursor: null,
      itemsDone: 0,
      eventCursor: 0,
      finishedAt: null,
    });
    const [dead, spent, alive] = await db()
      .insert(custodyExports)
      .values(
        [
          { ...row('dead', 1, lapsed), id: undefined },
          { ...row('spent', 3, lapsed), id: undefined },
          { ...row('alive', 1, new Date(Date.now() + 600_000)), id: undefined },
        ].map(({ id: _id, ...values }) => values),
      )
      .returning();

    // Act
    const requeued = await requeueStalledCustodyExports();
    await drainCustodyExports();

    // Assess
    expect(requeued).toBe(2);
    expect(expectData(await read(owner, caseId, dead!.id))).toMatchObject({
      status: 'succeeded',
      progress: { itemsWritten: 2 },
    });
    expect(expectData(await read(owner, caseId, spent!.id))).toMatchObject({
      status: 'failed',
      error: { code: 'ATTEMPTS_EXHAUSTED' },
      volumes: [],
    });
    expect(expectData(await read(owner, caseId, alive!.id))).toMatchObject({ status: 'running' });
  });

  it('refuses a PDF at once over the limit with 409 CUSTODY_TOO_LARGE, naming the export route', async () => {
    custodyLimits.pdfAtOnceMax = 5;
    const { owner, caseId } = await caseWithEmails(6);
    const refused = await invoke(routes.getCaseCustody, {
      token: owner.accessToken,
      path: { caseId },
      query: { format: 'pdf' },
    });
    expectError(refused, 409, 'CUSTODY_TOO_LARGE');
    expect(refused.body.error.message).toContain('/custody/exports');
  });

  it('is for owners and admins of the case: a viewer or opposing counsel is refused', async () => {
    const { owner, caseId } = await caseWithEmails(1);
    const admin = await memberWithAccess(owner.organizationId, caseId, 'admin');
    const started = expectData(await start(admin, caseId), 202);
    await drainCustodyExports();
    for (const access of ['viewer', 'opposing_counsel'] as const) {
      const member = await memberWithAccess(owner.organizationId, caseId, access);
      expectError(await start(member, caseId), 403, 'INSUFFICIENT_ROLE');
      expectError(await read(member, caseId, started.id), 403, 'INSUFFICIENT_ROLE');
    }
    const outsider = await createUser();
    expect([403, 404]).toContain((await start(outsider, caseId)).status);
    expect([403, 404]).toContain((await read(outsider, caseId, started.id)).status);
    expectError(await start(owner, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
  });
});

describeSecurity(routes.startCustodyExport, {
  request: ({ caseId }) => ({ path: { caseId } }),
  succeeds: true,
  after: () => drainCustodyExports(),
});
