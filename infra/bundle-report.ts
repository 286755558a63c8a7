import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { CHUNK_DIRECTORY, FORBIDDEN_BUNDLE_SOURCES } from './bundling';
import type { ServiceFunction } from './constructs/service-function';

/**
 * Looking at the Lambda bundles the stack staged: their size, what they contain, and how they
 * behave when a fresh Node process loads them (used by `npm run size` and test/infra).
 */

export interface Bundle {
  name: string;
  /** Staged asset directory (index.mjs, index.mjs.map, ...). */
  directory: string;
  /** Minified JavaScript shipped: index.mjs and the chunks split off it, bytes. */
  bytes: number;
  /** What a cold start reads and compiles: index.mjs and the chunks it imports statically, bytes. */
  initialBytes: number;
  /** Repository-relative module paths in the bundle (from its source map). */
  sources: string[];
  /** The function's literal environment variables (tokens left out). */
  environment: Record<string, string>;
}

export function bundleOf(name: string, construct: ServiceFunction): Bundle {
  const directory = construct.bundleDirectory;
  if (!directory) throw new Error(`${name}: bundle not staged (was bundling skipped?)`);
  const cfn = construct.function.node.defaultChild as CfnFunction;
  const resolved = Stack.of(construct).resolve(cfn.environment) as { variables?: Record<string, unknown> } | undefined;
  const environment = Object.fromEntries(
    Object.entries(resolved?.variables ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
  const files = javascriptFiles(directory);
  return {
    name,
    directory,
    bytes: files.reduce((total, file) => total + statSync(join(directory, file)).size, 0),
    initialBytes: [...staticallyLoaded(directory)].reduce(
      (total, file) => total + statSync(join(directory, file)).size,
      0,
    ),
    sources: construct.bundleSources(),
    environment,
  };
}

/** index.mjs and the chunks (chunks/*.mjs), relative to the bundle directory. */
function javascriptFiles(directory: string): string[] {
  const chunks = join(directory, CHUNK_DIRECTORY);
  return [
    'index.mjs',
    ...(existsSync(chunks)
      ? readdirSync(chunks)
          .filter((file) => file.endsWith('.mjs'))
          .sort()
          .map((file) => `${CHUNK_DIRECTORY}/${file}`)
      : []),
  ];
}

/** index.mjs and every chunk reached from it by static imports (dynamic `import("...")` left out). */
function staticallyLoaded(directory: string): Set<string> {
  const loaded = new Set<string>();
  const visit = (file: string) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    const text = readFileSync(join(directory, file), 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*"(\.\.?\/[^"]+\.mjs)"/g))
      visit(posix.normalize(posix.join(posix.dirname(file), match[1]!)));
  };
  visit('index.mjs');
  return loaded;
}

/** Modules that must never be bundled (PGlite, the local server, the sandbox processor, ...) found in the bundle. */
export function forbiddenSources(bundle: Bundle): string[] {
  return bundle.sources.filter((source) => FORBIDDEN_BUNDLE_SOURCES.some((forbidden) => forbidden.test(source)));
}

/**
 * Copies a bundle into a fresh directory outside the repository, so that loading it cannot fall
 * back on the repository's node_modules: what loads there loads in Lambda (where only the
 * runtime's @aws-sdk/* is added). Returns the directory; remove it when done.
 */
export function isolateBundle(bundle: Bundle): string {
  const directory = mkdtempSync(join(tmpdir(), `cebs-bundle-${bundle.name}-`));
  cpSync(bundle.directory, directory, { recursive: true });
  writeFileSync(join(directory, 'run.mjs'), RUNNER);
  return directory;
}

/**
 * Loads index.mjs (timing it from process start: the Init phase of a cold start, minus the Lambda
 * runtime client) and, when an event is given on stdin, invokes the handler once. The import
 * counts what the module started loading in the background at init (lib/observability/optional.ts,
 * INIT_LOADS: Powertools Metrics and Tracer where the function's environment turns them on), since
 * a cold start's first invocation waits for it.
 */
const RUNNER = `
const loadStart = performance.now();
const module = await import(new URL('./index.mjs', import.meta.url));
await Promise.all(globalThis[Symbol.for('case-evidence.initLoads')] ?? []);
const loaded = performance.now();
let input = '';
for await (const chunk of process.stdin) input += chunk;
const request = input ? JSON.parse(input) : undefined;
let result;
if (request) {
  const started = Date.now();
  const context = { ...request.context, getRemainingTimeInMillis: () => 30000 - (Date.now() - started), done() {}, fail() {}, succeed() {} };
  result = await module.handler(request.event, context);
}
process.stdout.write(JSON.stringify({ initMs: loaded, importMs: loaded - loadStart, handler: typeof module.handler, result }));
process.exit(0);
`;

export interface RunResult {
  initMs: number;
  importMs: number;
  handler: string;
  result?: { statusCode?: number; body?: string; headers?: Record<string, string> };
  stderr: string;
}

/** One fresh `node run.mjs` in an isolated bundle directory. */
export function runBundle(
  directory: string,
  environment: Record<string, string>,
  request?: { event: unknown; context: unknown },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['run.mjs'], {
      cwd: directory,
      // Only what Lambda would set: no inherited NODE_OPTIONS (tsx, vitest) or DATABASE_URL.
      env: {
        PATH: process.env.PATH ?? '',
        TZ: 'UTC',
        AWS_LAMBDA_FUNCTION_NAME: 'bundle-check',
        AWS_REGION: 'us-east-1',
        ...environment,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve({ ...(JSON.parse(stdout) as Omit<RunResult, 'stderr'>), stderr });
      } catch (error) {
        reject(new Error(`bundle in ${directory} failed (${(error as Error).message}): ${stderr.slice(0, 2000)}`));
      }
    });
    child.stdin.end(request ? JSON.stringify(request) : '');
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * What the Lambda runtime itself adds to a function's environment and that changes what its init
 * loads: AWS_LAMBDA_RUNTIME_API turns Powertools Metrics on, AWS_XRAY_DAEMON_ADDRESS (set for a
 * function with active tracing, as every function of the stack has) turns tracing on
 * (lib/observability/names.ts). Values as Lambda sets them; nothing is sent to either at init.
 */
export const LAMBDA_RUNTIME_ENVIRONMENT: Record<string, string> = {
  AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001',
  AWS_XRAY_DAEMON_ADDRESS: '169.254.79.129:2000',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
};

/**
 * Median init and import time of a bundle over `runs` fresh processes (one warm-up run first, for
 * the file cache), with the function's environment plus `runtime` (LAMBDA_RUNTIME_ENVIRONMENT to
 * load it as the cloud does).
 */
export async function measureInit(
  bundle: Bundle,
  runs: number,
  runtime: Record<string, string> = {},
): Promise<{ initMs: number; importMs: number }> {
  const directory = isolateBundle(bundle);
  const environment = { ...runtime, ...bundle.environment };
  try {
    await runBundle(directory, environment);
    const samples: RunResult[] = [];
    for (let run = 0; run < runs; run += 1) samples.push(await runBundle(directory, environment));
    return { initMs: median(samples.map((s) => s.initMs)), importMs: median(samples.map((s) => s.importMs)) };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The bundle's JavaScript: index.mjs and its chunks, one after the other. */
export function readBundleText(bundle: Bundle): string {
  return javascriptFiles(bundle.directory)
    .map((file) => readFileSync(join(bundle.directory, file), 'utf8'))
    .join('\n');
}
