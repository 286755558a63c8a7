import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Stack } from 'aws-cdk-lib';
import { SecurityGroup, Vpc } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { buildApp, cdkJsonContext } from './build-app';
import { bundleBudgetBytes } from './bundling';
import {
  type Bundle,
  bundleOf,
  forbiddenSources,
  isolateBundle,
  LAMBDA_RUNTIME_ENVIRONMENT,
  measureInit,
  median,
  runBundle,
} from './bundle-report';
import { ServiceFunction } from './constructs/service-function';
import { environments, isEnvironmentName } from './environments';

/**
 * `npm run size [-- --env prod --runs 7 --json report.json --check]`
 *
 * Bundles every function of the stack exactly as `cdk synth` does (NodejsFunction, local esbuild),
 * then reports per function its minified size and its cold-start init time: a fresh Node process
 * loads the bundle from a directory outside the repository, with the function's environment
 * (NODE_OPTIONS included) and what the Lambda runtime adds to it (LAMBDA_RUNTIME_ENVIRONMENT: metrics
 * and active tracing on, as deployed; `--lambda off` leaves them out), and reports the time from process start until the handler module is
 * loaded; median of --runs processes. The same is measured for an empty handler bundled the same
 * way. The yardstick is a typical route of this stack (infra/bench/typical-route.ts: middy + JSON
 * body parser + classic zod + jose + drizzle + postgres.js) bundled the same way in the same run;
 * its import is sampled once next to every function (and --runs times more), so load on the
 * machine weighs on both sides of the ratio alike. The floor route (infra/bench/floor-route.ts: only
 * the libraries every route of ours loads at init, no route code) is sampled the same way; its
 * ratio to the typical route is the lowest the median could reach by changing route code. Targets: median bundle < 300 KB, none > 1.5 MB
 * (the import worker: 4 MB), median init < 1.5 x the empty handler's, median import <= 0.6 x the
 * typical route's (issue 19).
 */

const { values: args } = parseArgs({
  options: {
    env: { type: 'string', default: 'prod' },
    runs: { type: 'string', default: '7' },
    json: { type: 'string' },
    check: { type: 'boolean', default: false },
    /** `off`: load bundles without what the Lambda runtime sets (no metrics, no tracing), as before issue 35. */
    lambda: { type: 'string', default: 'on' },
  },
});
const environmentName = args.env ?? 'prod';
if (!isEnvironmentName(environmentName)) throw new Error(`Unknown environment ${environmentName}`);
const runs = Number(args.runs);
// As the cloud runs it (issue 35): the variables Lambda adds turn Powertools Metrics and Tracer on.
const runtime = args.lambda === 'off' ? {} : LAMBDA_RUNTIME_ENVIRONMENT;

const outdir = mkdtempSync(join(tmpdir(), 'cebs-size-'));
try {
  console.log(`Bundling every function of CaseEvidence-${environmentName} (esbuild, as cdk synth does)...`);
  const { app, stacks } = buildApp({
    environmentNames: [environmentName],
    nag: false,
    outdir,
    context: { ...cdkJsonContext(), environment: environmentName },
  });
  const bundles = stacks[0]!.functions.map((deployed) => bundleOf(deployed.name, deployed.construct));

  // The yardsticks, bundled the same way in the same kind of function: an empty handler; a typical
  // route of this stack, written the usual way; the floor: the libraries every route loads at init
  // and no route code (infra/bench/floor-route.ts).
  const baselineStack = new Stack(app, 'SizeBaseline', { env: stacks[0]!.env });
  const vpc = new Vpc(baselineStack, 'Vpc', { maxAzs: 1 });
  const yardstick = (name: string, id: string, entry: string, description: string) =>
    bundleOf(
      name,
      new ServiceFunction(baselineStack, id, {
        entry,
        description,
        settings: environments[environmentName],
        vpc,
        securityGroup: new SecurityGroup(baselineStack, `${id}Sg`, { vpc }),
        networkPolicy: new ManagedPolicy(baselineStack, `${id}Net`, {
          statements: [new PolicyStatement({ actions: ['ec2:DescribeSubnets'], resources: ['*'] })],
        }),
        environment: {},
      }),
    );
  const baseline = yardstick(
    '(empty handler)',
    'Empty',
    'infra/bench/empty-handler.ts',
    'Empty handler (size baseline)',
  );
  const typical = yardstick(
    '(typical route)',
    'Typical',
    'infra/bench/typical-route.ts',
    'Typical middy + zod + jose + drizzle route (size yardstick)',
  );
  const floor = yardstick(
    '(floor route)',
    'Floor',
    'infra/bench/floor-route.ts',
    'Our stack without route code (cold-start floor)',
  );

  console.log(`Loading each bundle in ${runs} fresh Node processes...`);
  const typicalDirectory = isolateBundle(typical);
  const floorDirectory = isolateBundle(floor);
  const typicalSamples: Array<{ initMs: number; importMs: number }> = [];
  const floorSamples: Array<{ initMs: number; importMs: number }> = [];
  const sampleTypical = async () => {
    typicalSamples.push(await runBundle(typicalDirectory, { ...runtime, ...typical.environment }));
    floorSamples.push(await runBundle(floorDirectory, { ...runtime, ...floor.environment }));
  };
  const rows: Array<Bundle & { initMs: number; importMs: number; forbidden: string[] }> = [];
  try {
    await runBundle(typicalDirectory, { ...runtime, ...typical.environment }); // warm-up (file cache)
    await runBundle(floorDirectory, { ...runtime, ...floor.environment });
    for (let run = 0; run < runs; run += 1) await sampleTypical();
    for (const bundle of [baseline, ...bundles]) {
      rows.push({ ...bundle, ...(await measureInit(bundle, runs, runtime)), forbidden: forbiddenSources(bundle) });
      await sampleTypical();
      process.stdout.write('.');
    }
  } finally {
    rmSync(typicalDirectory, { recursive: true, force: true });
    rmSync(floorDirectory, { recursive: true, force: true });
  }
  process.stdout.write('\n\n');
  const typicalRow = {
    ...typical,
    initMs: median(typicalSamples.map((sample) => sample.initMs)),
    importMs: median(typicalSamples.map((sample) => sample.importMs)),
    forbidden: forbiddenSources(typical),
  };
  const floorRow = {
    ...floor,
    initMs: median(floorSamples.map((sample) => sample.initMs)),
    importMs: median(floorSamples.map((sample) => sample.importMs)),
    forbidden: forbiddenSources(floor),
  };

  const [emptyRow, ...functionRows] = rows;
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const width = Math.max(...rows.map((row) => row.name.length));
  console.log(
    `${'function'.padEnd(width)}  ${'minified'.padStart(10)}  ${'at init'.padStart(10)}  ${'init'.padStart(9)}  ${'import'.padStart(9)}`,
  );
  for (const row of [...functionRows].sort((a, b) => b.bytes - a.bytes).concat(emptyRow!, floorRow, typicalRow)) {
    console.log(
      `${row.name.padEnd(width)}  ${kb(row.bytes).padStart(10)}  ${kb(row.initialBytes).padStart(10)}  ${ms(row.initMs).padStart(9)}  ${ms(row.importMs).padStart(9)}${row.forbidden.length ? `  FORBIDDEN: ${row.forbidden.join(', ')}` : ''}`,
    );
  }

  const medianBytes = median(functionRows.map((row) => row.bytes));
  const medianInitialBytes = median(functionRows.map((row) => row.initialBytes));
  const largest = functionRows.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const medianInit = median(functionRows.map((row) => row.initMs));
  const medianImport = median(functionRows.map((row) => row.importMs));
  const ratio = medianInit / emptyRow!.initMs;
  const importRatio = medianImport / typicalRow.importMs;
  const floorRatio = floorRow.importMs / typicalRow.importMs;
  const checks = [
    { target: 'median bundle < 300 KB', ok: medianBytes < 300 * 1024, value: kb(medianBytes) },
    {
      target: 'no bundle > 1.5 MB (worker 4 MB)',
      ok: functionRows.every((row) => row.bytes <= bundleBudgetBytes(row.name)),
      value: `${kb(largest.bytes)} (${largest.name})`,
    },
    {
      target: 'median init < 1.5 x empty handler',
      ok: ratio < 1.5,
      value: `${ms(medianInit)} vs ${ms(emptyRow!.initMs)} = ${ratio.toFixed(2)}x`,
    },
    {
      target: 'median import <= 0.6 x typical route',
      ok: importRatio <= 0.6,
      value: `${ms(medianImport)} vs ${ms(typicalRow.importMs)} = ${importRatio.toFixed(2)}x`,
    },
    {
      target: 'no local-only module in any bundle',
      ok: [...rows, floorRow, typicalRow].every((row) => row.forbidden.length === 0),
      value: `${rows.filter((row) => row.forbidden.length).length} offending`,
    },
  ];
  console.log(
    `\n${functionRows.length} functions (${environmentName}, Node ${process.version}, NODE_OPTIONS=${environments[environmentName].sourceMapsAtRuntime ? '--enable-source-maps' : '(none)'}, ${args.lambda === 'off' ? 'without the Lambda runtime variables (no metrics, no tracing)' : 'with the Lambda runtime variables: metrics and tracing as deployed'})`,
  );
  console.log(`median bundle ${kb(medianBytes)}, of which read and compiled at init ${kb(medianInitialBytes)}`);
  console.log(
    `median import ${ms(medianImport)} (empty handler ${ms(emptyRow!.importMs)}, typical route ${ms(typicalRow.importMs)} over ${typicalSamples.length} samples, ${kb(typicalRow.bytes)})`,
  );
  console.log(
    `floor (our libraries at init, no route code): import ${ms(floorRow.importMs)} = ${floorRatio.toFixed(2)}x the typical route; the median route is ${(medianImport / floorRow.importMs).toFixed(2)}x the floor`,
  );
  for (const check of checks) console.log(`${check.ok ? 'PASS' : 'FAIL'}  ${check.target.padEnd(36)} ${check.value}`);

  if (args.json) {
    writeFileSync(
      args.json,
      JSON.stringify(
        {
          environment: environmentName,
          node: process.version,
          lambdaRuntimeVariables: args.lambda !== 'off',
          runs,
          emptyHandler: {
            bytes: emptyRow!.bytes,
            initialBytes: emptyRow!.initialBytes,
            initMs: emptyRow!.initMs,
            importMs: emptyRow!.importMs,
          },
          typicalRoute: {
            bytes: typicalRow.bytes,
            initialBytes: typicalRow.initialBytes,
            initMs: typicalRow.initMs,
            importMs: typicalRow.importMs,
          },
          floorRoute: {
            bytes: floorRow.bytes,
            initialBytes: floorRow.initialBytes,
            initMs: floorRow.initMs,
            importMs: floorRow.importMs,
          },
          functions: functionRows.map(({ name, bytes, initialBytes, initMs, importMs }) => ({
            name,
            bytes,
            initialBytes,
            initMs,
            importMs,
          })),
          summary: {
            medianBytes,
            medianInitialBytes,
            largest: { name: largest.name, bytes: largest.bytes },
            medianInitMs: medianInit,
            medianImportMs: medianImport,
            initRatio: ratio,
            importRatioToTypical: importRatio,
            floorRatioToTypical: floorRatio,
          },
          checks,
        },
        null,
        2,
      ),
    );
  }
  if (args.check && checks.some((check) => !check.ok)) process.exitCode = 1;
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
