import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';
import { enqueueImport, type LocalImportRunner } from '../../lib/material/imports/queue';
import type { ImportRunOutcome } from '../../lib/material/imports/run';

/** The database an import thread connects to: a Postgres server, or the local server's PGlite thread. */
export type ImportThreadDatabase = { url: string } | { pgliteThread: string };

/** What each thread starts with: the server's config and the database to connect to. */
export interface ImportThreadData {
  config: Config;
  database: ImportThreadDatabase;
  /** The thread's module (TypeScript), loaded by import-thread.mjs. */
  entry: string;
}
export interface ImportThreadRequest {
  importId: string;
}
export type ImportThreadReply =
  | { importId: string; threadId: number; outcome: ImportRunOutcome }
  | { importId: string; threadId: number; error: string };
/** A thread asking the local worker to run an import (an organization's next, once one of its imports ended). */
export interface ImportThreadEnqueue {
  enqueue: string;
}

export interface ImportThreads {
  /** Runs one import in an idle thread (the local worker's slots never ask for more than `slots` at once). */
  run: LocalImportRunner;
  /**
   * The thread id that ran each of the last IMPORT_RUNS_KEPT imports, by import id (the tests:
   * proof it was not this thread); bounded, since the local server runs for days.
   */
  ranOn: LRUCache<string, number>;
  /** Ends every thread; an import cut short is left running, and maintenance sends it again once its lease lapses. */
  close(): Promise<void>;
}

/** How many imports `ranOn` remembers, the most recent (about 100 bytes each). */
export const IMPORT_RUNS_KEPT = 1_000;

const BOOTSTRAP = new URL('./import-thread.mjs', import.meta.url);
const ENTRY = new URL('./import-thread.ts', import.meta.url);

interface PooledThread {
  worker: Worker;
  busy: boolean;
  /** The run waiting for this thread's answer. */
  pending?: { importId: string; resolve: (outcome: ImportRunOutcome) => void; reject: (error: Error) => void };
}

/**
 * The local server's import worker off its event loop: worker threads, each with its own event
 * loop and its own connections to the database (the Postgres server, or the PGlite thread of
 * infra/local/pglite-thread.ts), each running one import at a time with the
 * same runImport as the cloud's worker. So a long synchronous step of an importer (parsing a large
 * header block, say) stalls that thread, never the API's answers. `warm` threads start at once
 * (loading one takes a few seconds), others when first needed; all are kept; one that dies (out of
 * memory, a crash) fails its run and is replaced on the next.
 */
export function startImportThreads(options: {
  config: Config;
  database: ImportThreadDatabase;
  /** Another thread module (the tests' stand-in for runImport); the real one by default. */
  entry?: URL;
  /** Threads to start at once, so that the first imports do not wait for a thread to load. */
  warm?: number;
}): ImportThreads {
  const threads: PooledThread[] = [];
  const ranOn = new LRUCache<string, number>({ max: IMPORT_RUNS_KEPT });
  let closed = false;

  const spawn = (): PooledThread => {
    const data: ImportThreadData = {
      config: options.config,
      database: options.database,
      entry: (options.entry ?? ENTRY).href,
    };
    const thread: PooledThread = { worker: new Worker(BOOTSTRAP, { workerData: data }), busy: false };
    const fail = (error: Error) => {
      const at = threads.indexOf(thread);
      if (at >= 0) threads.splice(at, 1);
      thread.pending?.reject(error);
      thread.pending = undefined;
    };
    thread.worker.on('message', (reply: ImportThreadReply | ImportThreadEnqueue) => {
      if ('enqueue' in reply) {
        enqueueImport(reply.enqueue).catch((error) =>
          logger.error('could not queue an import a thread asked for', { error, importId: reply.enqueue }),
        );
        return;
      }
      const run = thread.pending;
      if (!run || run.importId !== reply.importId) return;
      thread.pending = undefined;
      thread.busy = false;
      ranOn.set(reply.importId, reply.threadId);
      if ('error' in reply) run.reject(new Error(`Import thread ${reply.threadId}: ${reply.error}`));
      else run.resolve(reply.outcome);
    });
    thread.worker.on('error', fail);
    thread.worker.on('exit', (code) => fail(new Error(`Import thread exited with code ${code}`)));
    threads.push(thread);
    return thread;
  };

  for (let i = 0; i < (options.warm ?? 0); i++) spawn();
  return {
    ranOn,
    run: (importId) => {
      if (closed) return Promise.reject(new Error('The import threads are closed'));
      const thread = threads.find((candidate) => !candidate.busy) ?? spawn();
      thread.busy = true;
      return new Promise<ImportRunOutcome>((resolve, reject) => {
        thread.pending = { importId, resolve, reject };
        thread.worker.postMessage({ importId } satisfies ImportThreadRequest);
      });
    },
    close: async () => {
      closed = true;
      await Promise.all(threads.splice(0).map((thread) => thread.worker.terminate()));
    },
  };
}
