import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { custodyExports } from '../../lib/db/schema';
import { drainCustodyExports } from '../../lib/material/custody-exports';
import { createUser, type TestUser } from '../harness/actors';
import { useTemporaryObjectStorage } from '../harness/object-storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

useTemporaryObjectStorage('custody-export-read-test');

const read = (user: TestUser, caseId: string, exportId: string) =>
  invoke(routes.getCustodyExport, { token: user.accessToken, path: { caseId, exportId } });

async function openCase(owner: TestUser, name = 'Read v. Export') {
  return expectData(
    await invoke(routes.createCase, { token: owner.accessToken, organization: owner.organizationId, body: { name } }),
    201,
  ).id as string;
}

/** An export row of the case, as the start route writes it (queued, nothing written yet). */
async function queuedExport(organizationId: string, caseId: string) {
  const [row] = await db()
    .insert(custodyExports)
    .values({
      organizationId,
      caseId,
      status: 'queued',
      covers: `test ${caseId}`,
      asOf: new Date(),
      chainHeadSequence: 1,
      chainHeadHash: 'f'.repeat(64),
      itemTotal: 10,
      eventTotal: 2,
    })
    .returning();
  return row!.id;
}

describe('GET /cases/{caseId}/custody/exports/{exportId}', () => {
  it('answers status and progress of a queued export, with no links yet', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    const exportId = await queuedExport(owner.organizationId, caseId);
    expect(expectData(await read(owner, caseId, exportId))).toMatchObject({
      id: exportId,
      caseId,
      status: 'queued',
      finishedAt: null,
      chainHead: { sequence: 1, hash: 'f'.repeat(64) },
      progress: { itemsWritten: 0, itemTotal: 10, eventsWritten: 0, eventTotal: 2, volumesWritten: 0, percent: 0 },
      volumes: [],
      error: null,
    });
  });

  it('is 404 for an unknown export, one of another case, and one of another organization', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    const otherCase = await openCase(owner, 'Other');
    const exportOfOther = await queuedExport(owner.organizationId, otherCase);
    expectError(await read(owner, caseId, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await read(owner, caseId, 'not-an-id'), 404, 'NOT_FOUND');
    expectError(await read(owner, caseId, exportOfOther), 404, 'NOT_FOUND');
    const stranger = await createUser();
    const theirCase = await openCase(stranger);
    const theirs = await queuedExport(stranger.organizationId, theirCase);
    expect([403, 404]).toContain((await read(owner, theirCase, theirs)).status);
    expectError(await read(owner, caseId, theirs), 404, 'NOT_FOUND');
  });

  it('answers expired once the volumes were removed', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    const started = expectData(
      await invoke(routes.startCustodyExport, { token: owner.accessToken, path: { caseId } }),
      202,
    );
    await drainCustodyExports();
    const [row] = await db().select().from(custodyExports).where(eq(custodyExports.id, started.id));
    expect(row).toBeDefined();
    const done = expectData(await read(owner, caseId, started.id));
    expect(done.status).toBe('succeeded');
    await db()
      .update(custodyExports)
      .set({ volumes: done.volumes.map(() => ({ ...row!.volumes[0]!, expiresAt: '2000-01-01T00:00:00.000Z' })) })
      .where(eq(custodyExports.id, started.id));
    expect(expectData(await read(owner, caseId, started.id))).toMatchObject({ status: 'expired', volumes: [] });
  });
});

describeSecurity(routes.getCustodyExport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, exportId: await queuedExport(organizationId, caseId) },
  }),
  succeeds: true,
});
