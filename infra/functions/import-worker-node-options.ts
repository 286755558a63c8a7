/**
 * Node options of the import worker (infra/constructs/imports.ts), also the import benchmark's
 * default, so the memory it reports is the deployed worker's. A small young generation: mail
 * parsing allocates fast and V8 otherwise grows it to 192 MB of short-lived garbage (peak RSS of the
 * 1 GB mbox import: 221 MB with it at 1,441 messages/s, 327 MB without; test/bench/README.md).
 */
export const IMPORT_WORKER_NODE_FLAGS = ['--max-semi-space-size=16'] as const;
