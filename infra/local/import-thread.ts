import { parentPort, threadId, workerData } from 'node:worker_threads';
import { overrideConfig } from '../../lib/config';
import { openPostgres, useConnection } from '../../lib/db/client';
import { useLocalImportRunner } from '../../lib/material/imports/queue';
import { runImport } from '../../lib/material/imports/run';
import type { ImportThreadData, ImportThreadEnqueue, ImportThreadReply, ImportThreadRequest } from './import-threads';

/**
 * One local import worker thread (infra/local/import-threads.ts): runs runImport for each import
 * id the local server posts, one at a time, on its own event loop and its own connections to the
 * Postgres server (or to the PGlite thread), as the cloud's import worker function does; answers
 * each with the outcome.
 */
/**
 * The longest statement, as the cloud's import worker has it (infra/constructs/imports.ts): a batch
 * commits in a few statements of seconds; the API's 8 s limit is for requests.
 */
const STATEMENT_TIMEOUT_MS = 60_000;

const { config, database } = workerData as ImportThreadData;
overrideConfig(config);
useConnection(
  'url' in database
    ? // A small pool of its own, as the cloud's import worker has behind RDS Proxy.
      await openPostgres(database.url, { max: 2, statementTimeoutMs: STATEMENT_TIMEOUT_MS })
    : // A client of the PGlite thread: this thread parses and hashes, that one runs the statements.
      await (await import('./pglite-thread')).connectToPgliteThread(database.pgliteThread),
);

// What the worker queues from here (an organization's next import, once one ended) runs in the
// local server's slots: the thread hands it over rather than running it itself.
useLocalImportRunner(async (importId) => {
  parentPort!.postMessage({ enqueue: importId } satisfies ImportThreadEnqueue);
  return 'skipped';
});

parentPort!.on('message', async ({ importId }: ImportThreadRequest) => {
  let reply: ImportThreadReply;
  try {
    reply = { importId, threadId, outcome: await runImport(importId) };
  } catch (error) {
    reply = { importId, threadId, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply);
});
