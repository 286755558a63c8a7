import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { type ImportThreads, startImportThreads } from '../../infra/local/import-threads';
import { canRunPgliteThread, type PgliteThread, startPgliteThread } from '../../infra/local/pglite-thread';
import { config } from '../../lib/config';
import { type Connection, currentConnection, db, useConnection } from '../../lib/db/client';
import { emails } from '../../lib/db/schema';
import { migrateDatabase } from '../../lib/db/migrate';
import { drainLocalImports, useLocalImportRunner } from '../../lib/material/imports/queue';
import { runImport } from '../../lib/material/imports/run';
import { ownDataDir } from '../harness/data-dir';
import { expectData, invoke } from '../harness/invoke';
import { createStaged } from '../material/import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * The local server on PGlite (no DATABASE_URL): PGlite in a thread of its own
 * (infra/local/pglite-thread.ts), this thread and each import thread its clients. Whatever
 * database the rest of the suite runs on, this file opens a PGlite of its own that way.
 */

const dataDir = ownDataDir('pglite-thread-');
let database: PgliteThread | undefined;
let threads: ImportThreads | undefined;
let suiteConnection: Connection | undefined;

describe.runIf(canRunPgliteThread())('PGlite in its own thread', () => {
  beforeAll(async () => {
    suiteConnection = currentConnection();
    database = await startPgliteThread(join(dataDir.path, 'pglite'));
    await migrateDatabase(database.connection.db, 'pglite');
    useConnection(database.connection);
  });

  afterAll(async () => {
    await drainLocalImports();
    useLocalImportRunner((importId) => runImport(importId));
    await threads?.close();
    await database?.connection.close();
    if (suiteConnection) useConnection(suiteConnection);
  });

  it('serves queries and transactions to this thread, a failed transaction rolled back', async () => {
    // A PGlite result (rows), whatever the suite's own driver.
    const result = (await db().execute(sql`select 41 + 1 as answer`)) as unknown as { rows: { answer: number }[] };
    expect(result.rows).toEqual([{ answer: 42 }]);
    const s = await caseWithOwner();
    await expect(
      db().transaction(async (tx) => {
        await tx.execute(sql`update cases set name = 'renamed' where id = ${s.caseId}`);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const answer = expectData(
      await invoke(routes.getCase, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
      }),
    );
    expect(answer.name).not.toBe('renamed');
  });

  it('runs an import started through the API in an import thread, a client of the PGlite thread', async () => {
    threads = startImportThreads({ config: config(), database: { pgliteThread: database!.id } });
    useLocalImportRunner(threads.run, 2);
    const s = await caseWithOwner();
    const as = { token: s.owner.accessToken, organization: s.organizationId };
    const mbox = [1, 2, 3]
      .map(
        (n) =>
          `From a@example Mon Nov  2 10:00:00 2026\nMessage-ID: <p${n}@example>\nFrom: a@example\nTo: b@example\nSubject: Thread ${n}\n\nBody ${n}.\n\n`,
      )
      .join('');
    const created = await createStaged(s, mbox);
    const path = { caseId: s.caseId, importId: created.import.id };
    expectData(await invoke(routes.startImport, { ...as, path }), 202);
    await drainLocalImports();

    const done = expectData(await invoke(routes.getImport, { ...as, path }));
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(threads.ranOn.get(created.import.id)).toBeGreaterThan(0);
    expect(threads.ranOn.get(created.import.id)).not.toBe(threadId);
    expect(done.progress).toMatchObject({ itemsImported: 3 });
    // What the import thread wrote is what this thread reads: one PGlite, shared.
    const subjects = await db()
      .select({ subject: emails.subject })
      .from(emails)
      .where(eq(emails.caseId, s.caseId))
      .orderBy(emails.subject);
    expect(subjects.map((e) => e.subject)).toEqual(['Thread 1', 'Thread 2', 'Thread 3']);
  });
});
