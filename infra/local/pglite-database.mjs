// The thread owning the local server's PGlite (see infra/local/pglite-thread.ts): PGlite's own
// worker (`@electric-sql/pglite/worker`), written for a browser's Web Worker, in a Node worker
// thread. Its clients reach it over BroadcastChannel and Web Locks, which Node shares between the
// threads of a process; only the first handshake goes through this thread's port, so the Web
// Worker globals it uses (postMessage, addEventListener) are given here over parentPort. Plain
// JavaScript: it needs nothing of the service's TypeScript.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { worker } from '@electric-sql/pglite/worker';

const wrapped = new Map();
globalThis.postMessage = (message) => parentPort.postMessage(message);
globalThis.addEventListener = (type, listener, options) => {
  if (type !== 'message') return;
  const onMessage = (data) => {
    if (options?.once) {
      parentPort.off('message', onMessage);
      wrapped.delete(listener);
    }
    listener({ data });
  };
  wrapped.set(listener, onMessage);
  parentPort.on('message', onMessage);
};
globalThis.removeEventListener = (type, listener) => {
  const onMessage = wrapped.get(listener);
  if (type === 'message' && onMessage) parentPort.off('message', onMessage);
  wrapped.delete(listener);
};

let database;
// The server's shutdown: PGlite closes its data directory, then the thread ends.
parentPort.on('message', async (message) => {
  if (message?.type !== 'cebs-close') return;
  await database?.close();
  process.exit(0);
});
await worker({
  init: async () => {
    database = await PGlite.create(workerData.dataDir);
    return database;
  },
});
