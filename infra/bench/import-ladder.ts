import { execSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LAMBDA_RUNTIME_ENVIRONMENT } from '../bundle-report';
import { lambdaBundling, REPOSITORY_ROOT } from '../bundling';

/**
 * `npx tsx infra/bench/import-ladder.ts [--runs 3] [--route functions/user/get-profile.ts]`
 *
 * Where a route's import goes, by cumulative steps: each step is a bundle (built like a function's,
 * infra/bundling) that imports what the step before did plus one more piece, from an empty handler
 * to the floor route (our libraries) and on to the whole route. A step's increment is what that
 * piece adds to a cold import. Measured as user-space instructions with valgrind's callgrind (stable
 * to a few percent under load, unlike times on a shared machine; median of --runs), minus the empty
 * handler's. Run by hand (needs valgrind); the figures are in test/bench/README.md, "Cold start".
 */

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    route: { type: 'string', default: 'functions/billing/get-current-plan.ts' },
    response: { type: 'string', default: '../../schemas/billing/billing#CurrentPlanResponseEntity' },
    lambda: { type: 'string', default: 'on' },
    only: { type: 'string' },
  },
});
const [responseModule, responseName] = args.response!.split('#') as [string, string];

/** Step name -> entry source (written to infra/bench/.ladder/, next to this file's imports). */
const libraries = [
  [
    'middy + our middlewares',
    `import middy from '@middy/core';
import httpCors from '@middy/http-cors';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
export const handler = middy().use(httpHeaderNormalizer()).use(httpCors()).use(httpJsonBodyParser()).handler(async () => ({}));`,
  ],
  [
    '+ Powertools logger (loaded)',
    `import { Logger } from '@aws-lambda-powertools/logger';
export * from './step-1';
export const keep2 = Logger;`,
  ],
  [
    '+ zod/mini, one object schema',
    `import * as z from 'zod/mini';
export * from './step-2';
export const keep3 = z.object({ id: z.string().check(z.uuid()), title: z.string().check(z.maxLength(200)) });`,
  ],
  [
    '+ jose (jwtVerify)',
    `import { jwtVerify } from 'jose';
export * from './step-3';
export const keep4 = jwtVerify;`,
  ],
  [
    '= floor route (+ drizzle, one table)',
    `export * from './step-4';
export { handler } from '../floor-route';`,
  ],
  [
    '+ lib/config',
    `import { config } from '../../../lib/config';
export * from './step-5';
export const keep6 = config;`,
  ],
  [
    '+ lib/log (logger created lazily)',
    `import { logger } from '../../../lib/log';
export * from './step-6';
export const keep7 = logger;`,
  ],
  [
    '+ lib/db/schema (every table)',
    `import * as schema from '../../../lib/db/schema';
export * from './step-7';
export const keep8 = schema;`,
  ],
  [
    '+ lib/http/endpoint (middleware stack)',
    `import { endpoint } from '../../../lib/http/endpoint';
export * from './step-8';
export const keep9 = endpoint;`,
  ],
  [
    '+ functions/routes.ts (route table)',
    `import { routes } from '../../../functions/routes';
export * from './step-9';
export const keep10 = routes;`,
  ],
  [
    `+ response schema (${responseName})`,
    `import { ${responseName} } from '../${responseModule}';
export * from './step-10';
export const keep11 = ${responseName};`,
  ],
  [
    `= ${args.route} (+ domain code)`,
    `export * from './step-11';
export { handler } from '../../../${args.route}';`,
  ],
] as const;

const ladderDirectory = join(REPOSITORY_ROOT, 'infra', 'bench', '.ladder');
const work = mkdtempSync(join(tmpdir(), 'cebs-ladder-'));
const runs = Number(args.runs);

/** Bundles an entry as a function's and copies it outside the repository. */
function bundle(entry: string, name: string): string {
  const out = join(work, name);
  mkdirSync(out, { recursive: true });
  execSync(lambdaBundling(entry).commandHooks!.afterBundling(REPOSITORY_ROOT, out).join(' && '), {
    stdio: 'inherit',
    shell: '/bin/bash',
  });
  return out;
}

/** Median user-space instructions of a fresh Node process importing the bundle, in millions. */
function instructions(directory: string): number {
  const samples = Array.from({ length: runs }, () => {
    // callgrind reports on stderr.
    const { stderr } = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        '--callgrind-out-file=/dev/null',
        process.execPath,
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(join(directory, 'index.mjs'))});await Promise.all(globalThis[Symbol.for('case-evidence.initLoads')] ?? []);process.exit(0)`,
      ],
      {
        cwd: directory,
        env: {
          PATH: process.env.PATH ?? '',
          TZ: 'UTC',
          AWS_LAMBDA_FUNCTION_NAME: 'ladder',
          AWS_REGION: 'us-east-1',
          ...(args.lambda === 'off' ? {} : LAMBDA_RUNTIME_ENVIRONMENT),
        },
        encoding: 'utf8',
      },
    );
    const output = stderr;
    return Number(/Collected : (\d+)/.exec(output)?.[1] ?? Number.NaN);
  }).sort((a, b) => a - b);
  return samples[samples.length >> 1]! / 1e6;
}

try {
  rmSync(ladderDirectory, { recursive: true, force: true });
  mkdirSync(ladderDirectory, { recursive: true });
  for (const [index, [, source]] of libraries.entries())
    writeFileSync(join(ladderDirectory, `step-${index + 1}.ts`), `${source}\n`);
  const empty = instructions(bundle('infra/bench/empty-handler.ts', 'empty'));
  const typical = instructions(bundle('infra/bench/typical-route.ts', 'typical')) - empty;
  console.log(
    `empty handler ${empty.toFixed(0)} M instructions (subtracted below); typical route ${typical.toFixed(0)} M\n`,
  );
  if (args.only) {
    const floor = instructions(bundle('infra/bench/floor-route.ts', 'floor')) - empty;
    console.log(`floor route ${floor.toFixed(0)} M (${(floor / typical).toFixed(2)}x typical)`);
    for (const [index, entry] of args.only.split(',').entries()) {
      const total = instructions(bundle(entry, `only-${index}`)) - empty;
      console.log(`${entry.padEnd(58)} ${total.toFixed(0).padStart(4)} M  (${(total / typical).toFixed(2)}x typical)`);
    }
  } else {
    let previous = 0;
    libraries.forEach(([name], index) => {
      const total = instructions(bundle(`infra/bench/.ladder/step-${index + 1}.ts`, `step-${index + 1}`)) - empty;
      console.log(
        `${name.padEnd(58)} ${`+${(total - previous).toFixed(0)}`.padStart(5)} M  = ${total.toFixed(0).padStart(4)} M  (${(total / typical).toFixed(2)}x typical)`,
      );
      previous = total;
    });
  }
} finally {
  rmSync(ladderDirectory, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
