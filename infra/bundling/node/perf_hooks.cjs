// Bundled in place of `import ... from 'node:perf_hooks'` (see infra/bundling/index.ts): CommonJS access to the
// built-in skips the ESM facade, which evaluates every lazy export at import time.
module.exports = process.getBuiltinModule('node:perf_hooks');
