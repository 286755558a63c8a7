import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { IMPORT_RUNS_KEPT, type ImportThreads, startImportThreads } from '../../infra/local/import-threads';
import { config } from '../../lib/config';
import { db } from '../../lib/db/client';
import { LocalMailSink } from '../../lib/mail/transport';
import {
  drainLocalImports,
  enqueueImport,
  type LocalImportRunner,
  useLocalImportRunner,
} from '../../lib/material/imports/queue';
import type { ImportRunOutcome } from '../../lib/material/imports/run';
import { databaseUrl } from '../harness/databases';
import { ownDataDir } from '../harness/data-dir';
import { expectData, invoke } from '../harness/invoke';
import { createStaged } from '../material/import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29 (4), the local half: the local worker has several slots, so one organization's long
 * import does not hold up another's; a slot whose import the claim skips (its organization already
 * has one running) tries it again once a slot frees up; and with a Postgres server the imports run
 * in worker threads, off the API's event loop. No timings: a blocked import is one that waits for
 * a signal the test gives only after it has seen the other work done.
 */

const dataDir = ownDataDir('import-threads-');

/** The runner setup.ts registers for every test file: runImport in this process, one slot. */
const restoreRunner = () =>
  useLocalImportRunner(async (importId) => (await import('../../lib/material/imports/run')).runImport(importId));

afterEach(async () => {
  await drainLocalImports();
  restoreRunner();
});

/** A promise and its resolver: a stub import that finishes when the test says so. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('the local worker slots (in-process stub runners)', () => {
  it('runs another import while a long one holds the first slot', async () => {
    const long = gate<ImportRunOutcome>();
    const quickDone = gate();
    const ran: string[] = [];
    const runner: LocalImportRunner = async (id) => {
      ran.push(id);
      if (id === 'org-x-large') return long.promise;
      quickDone.open();
      return 'finished';
    };
    useLocalImportRunner(runner, 2);
    await enqueueImport('org-x-large');
    await enqueueImport('org-y-small');
    // Only reached if the small import ran while the large one still held its slot.
    await quickDone.promise;
    expect(ran).toEqual(['org-x-large', 'org-y-small']);
    long.open('finished');
    await drainLocalImports();
  });

  it('keeps one slot to one import at a time, in order, with one slot', async () => {
    const ran: string[] = [];
    const first = gate<ImportRunOutcome>();
    useLocalImportRunner(async (id) => {
      ran.push(id);
      return id === 'a' ? first.promise : 'finished';
    }, 1);
    await enqueueImport('a');
    await enqueueImport('b');
    await Promise.resolve();
    expect(ran).toEqual(['a']);
    first.open('finished');
    await drainLocalImports();
    expect(ran).toEqual(['a', 'b']);
  });

  it('tries a skipped import again once the running one of its organization ends', async () => {
    const running = gate<ImportRunOutcome>();
    const ran: string[] = [];
    let firstDone = false;
    useLocalImportRunner(async (id) => {
      ran.push(id);
      if (id === 'org-x-first') {
        const outcome = await running.promise;
        firstDone = true;
        return outcome;
      }
      // The claim: nothing claimable for the organization while its first import runs.
      return firstDone ? 'finished' : 'skipped';
    }, 2);
    await enqueueImport('org-x-first');
    await enqueueImport('org-x-second');
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['org-x-first', 'org-x-second']);
    running.open('finished');
    await drainLocalImports();
    expect(ran).toEqual(['org-x-first', 'org-x-second', 'org-x-second']);
  });

  it('drops an import skipped with nothing else running (finished already, or run elsewhere)', async () => {
    const ran: string[] = [];
    useLocalImportRunner(async (id) => {
      ran.push(id);
      return 'skipped';
    }, 2);
    await enqueueImport('done-already');
    await drainLocalImports();
    await enqueueImport('other');
    await drainLocalImports();
    expect(ran).toEqual(['done-already', 'other']);
  });

  it('goes on after a run that threw', async () => {
    const ran: string[] = [];
    useLocalImportRunner(async (id) => {
      ran.push(id);
      if (id === 'broken') throw new Error('boom');
      return 'finished';
    }, 1);
    await enqueueImport('broken');
    await enqueueImport('next');
    await drainLocalImports();
    expect(ran).toEqual(['broken', 'next']);
  });
});

describe('imports in worker threads', () => {
  let threads: ImportThreads | undefined;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createLocalServer({ mailSink: new LocalMailSink() });
    base = await listen(server, 0);
  });

  afterEach(async () => {
    await threads?.close();
    threads = undefined;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers /health while an import holds its thread in a synchronous step, and runs another organization's import beside it", async () => {
    threads = startImportThreads({
      config: config(),
      database: { url: 'postgres://unused' },
      entry: new URL('./fixtures/stub-import-thread.ts', import.meta.url),
    });
    useLocalImportRunner(threads.run, 2);
    const release = join(dataDir.path, 'release');
    const blocking = `block:${release}`;
    await enqueueImport(blocking);
    await enqueueImport('other-organization');
    // Had the blocking step run on this thread, neither of these could answer: the file that ends
    // it is written only after them.
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    const other = await (async () => {
      while (!threads!.ranOn.has('other-organization')) await new Promise((resolve) => setTimeout(resolve, 10));
      return threads!.ranOn.get('other-organization');
    })();
    expect(threads.ranOn.has(blocking)).toBe(false);
    writeFileSync(release, '');
    await drainLocalImports();
    expect(other).not.toBe(threadId);
    expect(threads.ranOn.get(blocking)).not.toBe(threadId);
    expect(threads.ranOn.get(blocking)).not.toBe(other);
  });

  it('fails the run of a thread that dies, and runs the next import in a new thread', async () => {
    threads = startImportThreads({
      config: config(),
      database: { url: 'postgres://unused' },
      entry: new URL('./fixtures/stub-import-thread.ts', import.meta.url),
    });
    await expect(threads.run('crash')).rejects.toThrow('Import thread exited with code 1');
    expect(await threads.run('next')).toBe('finished');
    expect(threads.ranOn.get('next')).not.toBe(threadId);
  });

  it('remembers which thread ran only the last IMPORT_RUNS_KEPT imports', async () => {
    threads = startImportThreads({
      config: config(),
      database: { url: 'postgres://unused' },
      entry: new URL('./fixtures/stub-import-thread.ts', import.meta.url),
    });
    // Act: past the bound
    for (let run = 0; run <= IMPORT_RUNS_KEPT; run += 1) await threads.run(`run-${run}`);

    // Assert: the count stays at the bound, the oldest run forgotten, the newest kept
    expect(threads.ranOn.size).toBe(IMPORT_RUNS_KEPT);
    expect(threads.ranOn.has('run-0')).toBe(false);
    expect(threads.ranOn.get(`run-${IMPORT_RUNS_KEPT}`)).toBeGreaterThan(0);
  });

  it.runIf(inject('databaseTemplate').kind === 'postgres')(
    'runs a real import in a thread with its own connections to the Postgres server',
    async () => {
      const [{ name }] = (await db().execute('select current_database() as name')) as unknown as [{ name: string }];
      const template = inject('databaseTemplate');
      if (template.kind !== 'postgres') return;
      threads = startImportThreads({ config: config(), database: { url: databaseUrl(template.url, name) } });
      useLocalImportRunner(threads.run, 2);
      const s = await caseWithOwner();
      const as = { token: s.owner.accessToken, organization: s.organizationId };
      const mbox = `From a@example Mon Nov  2 10:00:00 2026\nMessage-ID: <t1@example>\nFrom: a@example\nTo: b@example\nSubject: Threaded\n\nBody.\n\n`;
      const created = await createStaged(s, mbox);
      const path = { caseId: s.caseId, importId: created.import.id };
      expectData(await invoke(routes.startImport, { ...as, path }), 202);
      await drainLocalImports();
      const done = expectData(await invoke(routes.getImport, { ...as, path }));
      expect(done.status).toBe('succeeded');
      expect(threads.ranOn.get(created.import.id)).toBeGreaterThan(0);
      expect(threads.ranOn.get(created.import.id)).not.toBe(threadId);
    },
  );
});
