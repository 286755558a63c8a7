// The entry Node starts each local import worker thread with (infra/local/import-threads.ts): plain
// JavaScript, since a thread does not inherit a test runner's TypeScript loader; it loads the
// thread's module (workerData.entry, TypeScript) through tsx, which `npm start` runs on anyway.
import { workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

await tsImport(workerData.entry, import.meta.url);
