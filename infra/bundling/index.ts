import { readdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * How every Lambda bundle is built (route functions, maintenance, migrations, and the empty
 * handler `npm run size` compares against): esbuild run locally by NodejsFunction, no Docker.
 */

export const REPOSITORY_ROOT = join(import.meta.dirname, '..', '..');
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;
export const LAMBDA_ARCHITECTURE = Architecture.ARM_64;

/**
 * Modules that never enter a Lambda bundle. They are imported lazily (dynamic import) only on
 * paths the cloud does not take: PGlite when DATABASE_URL and DATABASE_SECRET_ARN are unset, the
 * sandbox payment processor when not deployed (lib/billing/processor). Left external, such an
 * import fails loudly instead of shipping megabytes of WASM or a fake processor. Each is imported
 * by a bare specifier (a package, or `#local-only/...` from package.json "imports"), which esbuild
 * keeps as written: an external relative path would be rewritten relative to the output folder
 * and carry the build machine's folders into the bundle.
 */
export const LOCAL_ONLY_MODULES = ['@electric-sql/pglite', 'drizzle-orm/pglite', '#local-only/*'];

/** Provided by the Node.js Lambda runtime (AWS SDK v3); imported lazily by the code that uses it. */
export const RUNTIME_PROVIDED_MODULES = ['@aws-sdk/*'];

/**
 * What a bundle's source map must never list (checked by test/infra and `npm run size`), matched
 * against repository-relative source paths. Packages that ship their own source maps appear under
 * their original sources (drizzle's PGlite driver as `node_modules/src/pglite/driver.ts`), hence
 * the loose PGlite pattern.
 */
export const FORBIDDEN_BUNDLE_SOURCES: readonly RegExp[] = [
  /pglite/i,
  /^lib\/billing\/processor\/sandbox/,
  /^infra\/local\//,
  /^lib\/admin\//,
  /^lib\/db\/migrate-cli/,
  /^test\//,
];

/**
 * The largest bundle a function may ship (checked by test/infra and `npm run size -- --check`):
 * 1.5 MB for every function on a request's path, where the bundle's load is the cold start; 4 MB
 * for the import worker, which carries the mail parser (about 2 MB) and starts once per run of up
 * to 15 minutes, off any request's path.
 */
export function bundleBudgetBytes(functionName: string): number {
  return (functionName === 'importWorker' ? 4 : 1.5) * 1024 * 1024;
}

/**
 * CommonJS code in the bundle (stripe, pdf-lib, postgres internals) calls `require` for Node
 * built-ins; an ESM bundle has none unless we create one.
 */
const REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module';const require = __createRequire(import.meta.url);";

/**
 * Built-ins imported as CommonJS instead of through Node's ESM facade. The facade evaluates every
 * export of the module when it is first imported: for `node:http` that loads undici (about 25 ms
 * of a cold start, measured with Node 24), for `crypto`/`process` a few ms more, and for the
 * modules postgres.js needs (net, tls, os) it moves their cost from module load to the first
 * query. Only built-ins without subpath modules are listed, so `fs/promises` & co. are untouched.
 */
const BUILTIN_SHIM_DIR = join(import.meta.dirname, 'node');
export const BUILTIN_ALIASES: string[] = readdirSync(BUILTIN_SHIM_DIR)
  .filter((file) => file.endsWith('.cjs'))
  .sort()
  .flatMap((file) => {
    const name = file.slice(0, -'.cjs'.length);
    const target = `./infra/bundling/node/${file}`;
    return [`${name}=${target}`, `node:${name}=${target}`];
  });

/**
 * Packages replaced in every bundle by a stand-in under ./lazy that loads them on first call:
 * `unhomoglyph` builds one regular expression out of its 115 KB confusables table when it is
 * evaluated (about a fifth of the import of a route that reaches lib/organizations), though only the
 * routes that key an organization name call it.
 */
const LAZY_DIR = join(import.meta.dirname, 'lazy');
export const LAZY_ALIASES: string[] = readdirSync(LAZY_DIR)
  .filter((file) => file.endsWith('.cjs'))
  .sort()
  .map((file) => `${file.slice(0, -'.cjs'.length)}=./infra/bundling/lazy/${file}`);

/** Where split-off chunks go in the asset, next to index.mjs. */
export const CHUNK_DIRECTORY = 'chunks';

export interface LambdaBundlingOptions {
  /** Copy extra files next to the bundle (the migration function takes drizzle/). */
  copyDirectories?: string[];
}

/**
 * What every bundle resolves the same way (the bench's bundled workers take it too,
 * test/bench/bundle-worker.ts): target, package entry fields, externals, aliases (paths relative
 * to the repository root) and the `require` banner.
 */
export const LAMBDA_ESBUILD = {
  target: 'node24',
  mainFields: ['module', 'main'],
  external: [...RUNTIME_PROVIDED_MODULES, ...LOCAL_ONLY_MODULES],
  aliases: [...BUILTIN_ALIASES, ...LAZY_ALIASES],
  banner: REQUIRE_BANNER,
} as const;

/** The esbuild settings of every bundle, as CLI arguments (apart from entry and output). */
function esbuildArguments(): string[] {
  return [
    '--bundle',
    '--platform=node',
    '--format=esm',
    `--target=${LAMBDA_ESBUILD.target}`,
    '--minify',
    '--sourcemap',
    // Stack traces map to file:line without shipping the sources (smaller package and map).
    '--sources-content=false',
    `--main-fields=${LAMBDA_ESBUILD.mainFields.join(',')}`,
    '--log-level=warning',
    '--legal-comments=none',
    ...LAMBDA_ESBUILD.external.map((module) => `--external:${module}`),
    ...LAMBDA_ESBUILD.aliases.map((alias) => `--alias:${alias}`),
    `--banner:js=${LAMBDA_ESBUILD.banner}`,
  ];
}

const quote = (argument: string) => `'${argument.replaceAll("'", `'\\''`)}'`;

/**
 * Where each bundle is built before it is moved into CDK's output folder: a folder of its own at a
 * fixed depth in the repository. esbuild writes source map paths relative to the output folder and
 * names chunks by a hash that covers the map, so a bundle built straight into the synth output
 * folder changed with that folder and with the checkout's place on the disk (every asset hash, so a
 * deployment from another machine replaced every function). Built here, every path is
 * `../../<repository path>` wherever the synth writes and wherever the checkout is.
 */
export const BUNDLE_WORK_DIRECTORY = '.bundling';

/**
 * NodejsFunction bundling: ESM, minified, source maps, only what the entry imports, and code
 * splitting: what the code loads with a dynamic `import()` (the X-Ray SDK where tracing is off,
 * AWS clients, Stripe, pdf-lib...) goes to chunks/ and is read and compiled only when a request
 * needs it, instead of making every cold start parse it. NodejsFunction runs esbuild with
 * `--outfile`, which excludes `--splitting`: its own run is reduced to a placeholder (every import
 * external, a few milliseconds) and the bundle is built after it, then the chunks nothing can load
 * are removed (./prune-chunks.mjs) and the source maps made repository-relative
 * (./relative-sources.mjs). No path of the build machine is left in the bundle (checked by
 * test/infra/reproducible-bundles.test.ts). `--preserve-symlinks` keeps a symlinked node_modules
 * (a worktree sharing another checkout's) at its place in the repository.
 */
export function lambdaBundling(entry: string, options: LambdaBundlingOptions = {}): BundlingOptions {
  const copies = options.copyDirectories ?? [];
  return {
    format: OutputFormat.ESM,
    target: 'node24',
    logLevel: LogLevel.WARNING,
    // NodejsFunction's own run: a placeholder, replaced by the split bundle below.
    externalModules: ['*'],
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) => {
        // Always two levels down; unique per run (synths running at once build the same assets).
        const work = join(inputDir, BUNDLE_WORK_DIRECTORY, randomUUID());
        const node = (script: string, ...args: string[]) =>
          [process.execPath, join(inputDir, 'infra', 'bundling', script), ...args].map(quote).join(' ');
        return [
          `rm -rf ${quote(work)} "${join(outputDir, 'index.mjs')}" "${join(outputDir, 'index.mjs.map')}"`,
          [
            // The aliases are paths relative to the repository root.
            `cd ${quote(inputDir)} &&`,
            quote(join(inputDir, 'node_modules', '.bin', 'esbuild')),
            quote(entry),
            ...esbuildArguments().map(quote),
            '--splitting',
            '--preserve-symlinks',
            quote(`--outdir=${work}`),
            '--entry-names=index',
            quote(`--chunk-names=${CHUNK_DIRECTORY}/[name]-[hash]`),
            quote('--out-extension:.js=.mjs'),
          ].join(' '),
          node('prune-chunks.mjs', work),
          node('relative-sources.mjs', work, inputDir),
          `cp -R ${quote(`${work}/.`)} ${quote(outputDir)}`,
          `rm -rf ${quote(work)}`,
          ...copies.map((directory) => `cp -R "${join(inputDir, directory)}" "${join(outputDir, directory)}"`),
        ];
      },
    },
  };
}
