/**
 * Node options of the import worker (infra/constructs/imports.ts), also the import benchmark's
 * default, so the memory it reports is the deployed worker's. A small young generation: mail
 * parsing allocates fast and V8 otherwise grows it to over 100 MB of short-lived garbage (peak RSS
 * of the 1 GB mbox import: about 210 MB with it, over 300 MB without; test/bench/README.md).
 */
export const IMPORT_WORKER_NODE_FLAGS = ['--max-semi-space-size=8'] as const;
