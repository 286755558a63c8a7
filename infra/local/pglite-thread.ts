import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { PGliteInterface } from '@electric-sql/pglite';
import { PGliteWorker } from '@electric-sql/pglite/worker';
import { drizzle } from 'drizzle-orm/pglite';
import type { Connection, Database } from '../../lib/db/client';
import * as schema from '../../lib/db/schema';

/**
 * The local server's PGlite in a thread of its own (infra/local/pglite-database.mjs), so that its
 * statements, which run synchronously in WebAssembly, never hold the API's event loop: an import's
 * batch insert takes the database thread for hundreds of milliseconds, while `/health` and every
 * other request go on answering. It is PGlite's own worker (`@electric-sql/pglite/worker`), made to
 * share one PGlite between a browser's tabs: each client (this thread, each import thread) talks
 * to it over a BroadcastChannel, and a transaction holds PGlite's lock across its statements.
 * Node shares BroadcastChannel and Web Locks (`navigator.locks`) between the threads of a process.
 */

/** What a client thread's PGliteWorker takes for its Web Worker: `postMessage`, `addEventListener`, `terminate`. */
interface WorkerLike {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  terminate(): void;
}

/** The database thread's client side: a Node Worker seen as a Web Worker. */
function asWebWorker(thread: Worker): WorkerLike {
  const wrapped = new Map<(event: { data: unknown }) => void, (data: unknown) => void>();
  return {
    postMessage: (message) => thread.postMessage(message),
    addEventListener: (_type, listener, options) => {
      const onMessage = (data: unknown) => {
        if (options?.once) {
          thread.off('message', onMessage);
          wrapped.delete(listener);
        }
        listener({ data });
      };
      wrapped.set(listener, onMessage);
      thread.on('message', onMessage);
    },
    removeEventListener: (_type, listener) => {
      const onMessage = wrapped.get(listener);
      if (onMessage) thread.off('message', onMessage);
      wrapped.delete(listener);
    },
    terminate: () => {},
  };
}

/**
 * Another thread joining the database thread (an import thread): PGliteWorker's handshake with its
 * Web Worker (`here`, `init`, `ready`) answered here with the database's id; from then on it finds
 * the database thread over the BroadcastChannel, as a browser's second tab finds the first.
 */
function joinedWorker(id: string): WorkerLike {
  const listeners = new Set<{ listener: (event: { data: unknown }) => void; once: boolean }>();
  const emit = (data: unknown) => {
    for (const entry of [...listeners]) {
      if (entry.once) listeners.delete(entry);
      entry.listener({ data });
    }
  };
  // The constructor listens for `here` first, then sends `init` and waits for `ready`.
  setImmediate(() => emit({ type: 'here' }));
  return {
    postMessage: (message) => {
      if ((message as { type?: string }).type === 'init') setImmediate(() => emit({ type: 'ready', id }));
    },
    addEventListener: (_type, listener, options) => {
      listeners.add({ listener, once: options?.once ?? false });
    },
    removeEventListener: (_type, listener) => {
      for (const entry of listeners) if (entry.listener === listener) listeners.delete(entry);
    },
    terminate: () => {},
  };
}

function connectionOf(client: PGliteWorker, close: () => Promise<void>): Connection {
  return {
    db: drizzle(client as unknown as PGliteInterface as never, { schema }) as unknown as Database,
    driver: 'pglite',
    close,
  };
}

/** The thread's entry, plain JavaScript, named apart from this module (`./pglite-thread` would resolve to a `.mjs` first). */
const ENTRY = new URL('./pglite-database.mjs', import.meta.url);

/** How long PGlite gets to close its data directory before its thread is ended anyway. */
const CLOSE_MS = 10_000;

/** Whether this Node can run the database thread: BroadcastChannel and Web Locks (`navigator.locks`, not in every Node 22). */
export const canRunPgliteThread = (): boolean =>
  typeof BroadcastChannel === 'function' && typeof globalThis.navigator?.locks?.request === 'function';

export interface PgliteThread {
  /** This thread's connection to it. Closing it closes the database (cleanly) and ends the thread. */
  connection: Connection;
  /** The database's id, for other threads to join it (connectToPgliteThread). */
  id: string;
}

/** Starts the thread owning the PGlite in `dataDir` and connects this thread to it. */
export async function startPgliteThread(dataDir: string): Promise<PgliteThread> {
  mkdirSync(dataDir, { recursive: true });
  const id = `cebs-pglite-${randomUUID()}`;
  const thread = new Worker(ENTRY, { workerData: { dataDir } });
  const failed = new Promise<never>((_, reject) => {
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`The PGlite thread exited with code ${code}`)));
  });
  failed.catch(() => {});
  const client = await Promise.race([PGliteWorker.create(asWebWorker(thread) as never, { id }), failed]);
  const close = async () => {
    await client.close();
    // PGlite closes its data directory before the thread ends (a terminated thread would leave it
    // to recover on the next start).
    const closed = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    thread.postMessage({ type: 'cebs-close' });
    const stuck = setTimeout(() => void thread.terminate(), CLOSE_MS);
    await Promise.race([closed, failed.catch(() => {})]);
    clearTimeout(stuck);
  };
  return { id, connection: connectionOf(client, close) };
}

/** A connection of this thread (an import thread) to the database thread `id`. */
export async function connectToPgliteThread(id: string): Promise<Connection> {
  const client = await PGliteWorker.create(joinedWorker(id) as never, { id });
  return connectionOf(client, () => client.close());
}
