import { deepStrictEqual } from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { openPostgres } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { databaseUrl } from '../harness/databases';
import { type AuditResult, benchAuditCost } from './audit';
import { type AuditVerifyResult, benchAuditVerify } from './audit-verify';
import { benchHandlerCpu, handlerCpuReport } from './handler-cpu';
import { benchImports, importNodeFlags, importScale, importsReport } from './imports';
import { benchMaterial } from './material';
import { benchBillingReport } from './report';
import { benchReview, reviewReport } from './review';
import { benchScale, scaleReport } from './scale';
import { freePort, ServerProcess } from './server-process';
import { benchSoak, type SoakResult } from './soak';
import { positiveIntEnv } from './samples';

/**
 * `npm run bench`: POST /auth/login and GET /user/profile through the local server (middy + drizzle,
 * every middleware) against a bare node:http + postgres.js server running the same SQL
 * (baseline-server.ts), both on a fresh Postgres database. Prints service/baseline ratios and
 * writes test/bench/results/latest.json. Any non-2xx answer or socket error fails the run.
 * BENCH_ONLY=soak runs the soak (soak.ts): the service alone under mixed reads and writes for
 * minutes, exiting 1 when it sees an error or RSS growth of 10% or more. The audit part (audit.ts)
 * compares a mutating route with and without its audit write, exiting 1 when the p50 ratio misses
 * its target. The imports part (imports.ts) imports a generated mbox and messages.csv, exiting 1
 * when a rate or peak RSS misses issue 17's targets.
 */

const RESULTS_FILE = join(import.meta.dirname, 'results', 'latest.json');
/**
 * Which parts to run: http (login/profile), handler-cpu (GET /user/profile's CPU per request
 * in-process, beside a bare handler running the same SQL; handler-cpu.ts), audit (a mutating route with and without its audit
 * write), report (50,000-row billing report), material (evidence), imports (a 1 GiB mbox and a
 * 1,000,000-row messages.csv; BENCH_IMPORT_SCALE shrinks them), verify (audit chain verification at
 * 1,000,000 events: incremental calls and the full pass), soak (minutes of mixed reads and
 * writes), review (issue 34: case search, tagging and thread emails by tag at 1,000,000 items), scale
 * (issue 35: the evidence reads and the billing statement at 100,000, 1,000,000 and 10,000,000 items
 * in one case). soak, review and scale are not in the default set: the soak alone takes
 * BENCH_SOAK_SECONDS (5 minutes) plus warm-up, review seeds 1.7 million rows (minutes), scale about
 * 17 million (most of an hour the first time; the seeded case is kept), so each runs when named
 * (BENCH_ONLY=soak).
 */
const ALL_PARTS = [
  'http',
  'handler-cpu',
  'audit',
  'report',
  'material',
  'imports',
  'verify',
  'review',
  'soak',
  'scale',
] as const;
const PARTS = new Set(
  (process.env.BENCH_ONLY ?? 'http,handler-cpu,audit,report,material,imports,verify').split(',').map((p) => p.trim()),
);
for (const part of PARTS)
  if (!(ALL_PARTS as readonly string[]).includes(part))
    throw new Error(`BENCH_ONLY: unknown part "${part}" (parts: ${ALL_PARTS.join(', ')})`);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const BENCH_DATABASE = 'cebs_bench';
const BENCH_URL = databaseUrl(ADMIN_URL, BENCH_DATABASE);
const SECONDS = positiveIntEnv('BENCH_SECONDS', 10);
const CONNECTIONS = positiveIntEnv('BENCH_CONNECTIONS', 32);
const WARMUP_SECONDS = 2;
const SOAK_SECONDS = positiveIntEnv('BENCH_SOAK_SECONDS', 300);
const SOAK_WARMUP_SECONDS = positiveIntEnv('BENCH_SOAK_WARMUP_SECONDS', 20);
const SOAK_USERS = positiveIntEnv('BENCH_SOAK_USERS', 16);
/** BENCH_SOAK_DATABASE=pglite soaks the embedded default of `npm start` instead of the Postgres server. */
const SOAK_DATABASE = process.env.BENCH_SOAK_DATABASE === 'pglite' ? 'pglite' : 'postgres';
/** Where a soak's figures and date go in results/latest.json: a PGlite soak is kept apart from the Postgres one. */
const SOAK_RESULTS_KEY = SOAK_DATABASE === 'pglite' ? 'soakPglite' : 'soak';
/** Runs per server of the audit part, alternating with and without (median of each reported). */
const AUDIT_ROUNDS = 2;
/** Fixed so both servers accept each other's tokens (48 characters). */
const JWT_SECRET = 'cebs-bench-only-jwt-secret-0123456789abcdefghijk';
/**
 * One account per connection: the sign-in failure limit (lib/auth/index.ts) counts an attempt
 * before its password check, 10 at a time per account and IP, so 32 connections signing in to one
 * account would be answered 429. Connection n signs in as bench-n.
 */
const credentials = (n: number) => ({ email: `bench-${n}@example.com`, password: 'bench-password-0123' });

/**
 * `baseline` is the bare server issue 19's profile target is set against; `baseline-cached` is the
 * same server keeping the service's 60-second profile cache (one statement a request, as the
 * service), measured on the profile route only as the stricter comparison.
 */
type Target = 'service' | 'baseline' | 'baseline-cached';
const TARGETS: readonly Target[] = ['service', 'baseline', 'baseline-cached'];

interface ConnectionRequest {
  headers: Record<string, string>;
  body?: string;
}

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** The servers measured, the service first. */
  targets: readonly Target[];
  /** Headers and body of each connection's requests against this server (one per connection). */
  requests(url: string): Promise<ConnectionRequest[]>;
}

interface Measurement {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

interface ScenarioResult {
  scenario: string;
  service: Measurement;
  baseline: Measurement;
  /** service / baseline: below 1 for rps and above 1 for latency mean the service is slower. */
  ratio: { rps: number; p50: number; p99: number };
  'baseline-cached'?: Measurement;
  /** service / baseline-cached, where measured. */
  ratioToCached?: { rps: number; p50: number; p99: number };
}

interface Envelope<T> {
  data: T;
  statusCode: number;
  timestamp: string;
}

interface LoginData {
  accessToken: string;
  refreshToken: string;
  userProfile: unknown;
}

async function recreateDatabase(): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${BENCH_DATABASE}" with (force)`);
    await admin.unsafe(`create database "${BENCH_DATABASE}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const connection = await openPostgres(BENCH_URL, { max: 1 });
  try {
    await migrateDatabase(connection.db, connection.driver);
  } finally {
    await connection.close();
  }
}

async function call<T>(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; token?: string } = {},
): Promise<Envelope<T>> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${url}${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Envelope<T>;
}

const login = (url: string, n = 0) => call<LoginData>(url, 'POST', '/auth/login', { body: credentials(n) });

/** `task(n)` for n in 0..count-1, at most `parallel` at a time (each sign-in is a scrypt run). */
async function forEachConnection<T>(count: number, parallel: number, task: (n: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      results[n] = await task(n);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return results;
}

/**
 * Creates one bench user per connection through the real register route; returns the scrypt cost
 * of the first one's hash.
 */
async function seedUsers(serviceUrl: string): Promise<{ logN: number; r: number; p: number }> {
  const sql = postgres(BENCH_URL, { max: 1, onnotice: () => {} });
  try {
    // Sign-ups share one limit of 10 a minute per client address (lib/http/rate-limit.ts): the
    // bench's own fresh database starts each one (4 at a time) with none counted.
    await forEachConnection(CONNECTIONS, 4, async (n) => {
      await sql`delete from rate_limit_counters`;
      return call(serviceUrl, 'POST', '/auth/register', {
        body: { name: `Bench User ${n}`, ...credentials(n), acceptTerms: true },
      });
    });
    const [row] = await sql<
      { password_hash: string }[]
    >`select password_hash from users where email = ${credentials(0).email}`;
    const [, logN, r, p] = (row?.password_hash ?? '').split('$');
    return { logN: Number(logN), r: Number(r), p: Number(p) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * The baseline must answer what the service answers, or the comparison means nothing. Checked as
 * bench user `n`: the service caches the profile it answers, and a later sign-in of the same user
 * moves its updatedAt, so each baseline is checked with a user of its own.
 */
async function checkSameAnswers(serviceUrl: string, baselineUrl: string, n: number): Promise<void> {
  const [serviceLogin, baselineLogin] = [await login(serviceUrl, n), await login(baselineUrl, n)];
  const [serviceProfile, baselineProfile] = [
    await call(serviceUrl, 'GET', '/user/profile', { token: serviceLogin.data.accessToken }),
    await call(baselineUrl, 'GET', '/user/profile', { token: baselineLogin.data.accessToken }),
  ];
  // Each sign-in stamps the user's last activity, so updatedAt differs between the two logins.
  const shape = ({ data, ...envelope }: Envelope<LoginData>) => ({
    ...envelope,
    timestamp: 'x',
    data: {
      ...data,
      accessToken: 'x',
      refreshToken: 'x',
      userProfile: { ...(data.userProfile as object), updatedAt: 'x' },
    },
  });
  deepStrictEqual(shape(baselineLogin), shape(serviceLogin), 'baseline login answer differs from the service');
  deepStrictEqual(
    { ...baselineProfile, timestamp: 'x' },
    { ...serviceProfile, timestamp: 'x' },
    'baseline profile answer differs from the service',
  );
}

const scenarios: Scenario[] = [
  {
    name: 'POST /auth/login',
    method: 'POST',
    path: '/auth/login',
    targets: ['service', 'baseline'],
    requests: async () =>
      Array.from({ length: CONNECTIONS }, (_, n) => ({
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials(n)),
      })),
  },
  {
    name: 'GET /user/profile',
    method: 'GET',
    path: '/user/profile',
    targets: TARGETS,
    // Each connection's user signs in to the server under test once (15-minute tokens cover both runs).
    requests: (url) =>
      forEachConnection(CONNECTIONS, 4, async (n) => ({
        headers: { authorization: `Bearer ${(await login(url, n)).data.accessToken}` },
      })),
  },
];

/** One autocannon run; throws on any non-2xx answer or socket error (warm-up runs included). */
async function load(
  url: string,
  scenario: Scenario,
  perConnection: readonly ConnectionRequest[],
  seconds: number,
  label: string,
  warmUp = false,
): Promise<Measurement> {
  let nextConnection = 0;
  const result = await autocannon({
    url: `${url}${scenario.path}`,
    method: scenario.method,
    connections: CONNECTIONS,
    duration: seconds,
    // Set once per connection: autocannon builds the request bytes then and reuses them.
    setupClient: (client) => {
      const { headers, body } = perConnection[nextConnection++ % perConnection.length]!;
      client.setHeadersAndBody(headers, body);
    },
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    const codes = Object.entries(result.statusCodeStats ?? {})
      .map(([code, stats]) => `${code}: ${stats.count ?? 0}`)
      .join(', ');
    throw new Error(
      `${label}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts (status codes ${codes || 'none'}); no numbers reported`,
    );
  }
  if (result['2xx'] === 0 && !warmUp) throw new Error(`${label}: no request completed`);
  return {
    rps: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result['2xx'],
  };
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

function report(results: ScenarioResult[], header: string[]): string {
  const lines = [...header, ''];
  const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(22) : cell.padStart(10))).join('');
  const ratioRow = (label: string, { rps, p50, p99 }: ScenarioResult['ratio']) =>
    row([label, `${rps.toFixed(2)}x`, `${p50.toFixed(2)}x`, `${p99.toFixed(2)}x`, '']);
  for (const result of results) {
    lines.push(result.scenario, row(['', 'rps', 'p50 ms', 'p99 ms', 'requests']));
    for (const target of TARGETS) {
      const m = result[target];
      if (!m) continue;
      lines.push(row([`  ${target}`, m.rps.toFixed(1), m.p50Ms.toFixed(1), m.p99Ms.toFixed(1), String(m.requests)]));
    }
    lines.push(ratioRow('  ratio', result.ratio));
    if (result.ratioToCached) lines.push(ratioRow('  ratio to cached', result.ratioToCached));
    lines.push('');
  }
  lines.push('ratio = service / baseline (rps below 1x and latency above 1x: the service is slower).');
  lines.push("ratio to cached = service / baseline-cached (the baseline with the service's profile cache).");
  return lines.join('\n');
}

function auditVerifyReport(r: AuditVerifyResult): string {
  const n = (value: number) => value.toLocaleString('en-US');
  return [
    `\nAudit chain verification, ${n(r.events)} events in one organization (seeded in ${r.seedSeconds} s):`,
    `  whole chain in one call (the route before issue 32, the CLI's audit verify)  ${String(r.wholeChainMs).padStart(7)} ms`,
    `  first verify call, no checkpoint yet (${n(r.firstCallEvents)} events, then stops)          ${String(r.firstCallMs).padStart(7)} ms`,
    `  verify call after ${r.incremental.appended} new events, ${r.incremental.samples} samples: p50 ${r.incremental.p50Ms} ms, max ${r.incremental.maxMs} ms`,
    `  full re-verification: ${r.full.runs} maintenance run(s), ${n(r.full.totalMs)} ms in all, longest run ${n(r.full.maxRunMs)} ms, result ${r.full.valid === true ? 'valid' : 'NOT VALID'}`,
    `  target: a verify call within ${n(r.target.incrementalMs)} ms at ${n(r.target.events)} events: ${r.passed ? 'met' : 'MISSED'}`,
  ].join('\n');
}

function auditReport(audit: AuditResult, machine: { node: string; postgres: string; cpu: string }): string {
  const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(16) : cell.padStart(10))).join('');
  const lines = [
    `\nAudit trail cost: ${audit.route} (one ${audit.event} event per request)`,
    `  ${audit.rounds} rounds per server, alternating, ${audit.seconds} s each after ${audit.warmupSeconds} s warm-up, ${audit.connections} connections; median of the rounds`,
  ];
  const scenarios = [
    ['one organization per connection (target)', audit.organizations],
    ['all in one organization (every write queues on its chain head; no target)', audit.oneOrganization],
  ] as const;
  for (const [title, scenario] of scenarios) {
    lines.push(`  ${title}`, row(['', 'rps', 'p50 ms', 'p99 ms', 'requests']));
    for (const [label, m] of [
      ['  with audit', scenario.withAudit],
      ['  without audit', scenario.withoutAudit],
    ] as const)
      lines.push(row([label, m.rps.toFixed(1), m.p50Ms.toFixed(2), m.p99Ms.toFixed(2), String(m.requests)]));
    const { rps, p50, p99 } = scenario.ratio;
    lines.push(row(['  ratio', `${rps.toFixed(2)}x`, `${p50.toFixed(2)}x`, `${p99.toFixed(2)}x`, '']));
    for (const run of scenario.runs)
      lines.push(
        `    round ${run.round} ${run.variant === 'withAudit' ? 'with   ' : 'without'}  p50 ${run.p50Ms.toFixed(2).padStart(7)} ms   p99 ${run.p99Ms.toFixed(2).padStart(7)} ms   ${String(run.requests).padStart(7)} answers   audit events +${run.auditEventsAdded}`,
      );
  }
  lines.push(
    `  load average ${audit.loadAverage.before} before, ${audit.loadAverage.after} after; Node ${machine.node}, PostgreSQL ${machine.postgres}, ${machine.cpu}`,
    audit.passed
      ? `  p50 ratio ${audit.organizations.ratio.p50.toFixed(2)}x: within the ${audit.target.p50RatioAtMost}x target`
      : `  TARGET MISSED: p50 ratio ${audit.organizations.ratio.p50.toFixed(2)}x, target at most ${audit.target.p50RatioAtMost}x`,
  );
  return lines.join('\n');
}

const signed = (value: number) => `${value >= 0 ? '+' : ''}${value}`;

function soakReport(soak: SoakResult, machine: { node: string; postgres: string; cpu: string }): string {
  const lines = [
    `\nSoak (${soak.database}): ${soak.seconds} s after ${soak.warmupSeconds} s warm-up, ${soak.connections} connections, ${soak.users} users, ${soak.readPercent}% reads`,
    `  requests ${soak.requests}   errors ${soak.errors.total} (non-2xx ${soak.errors.non2xx}, socket ${soak.errors.socketErrors}, timeouts ${soak.errors.timeouts}; warm-up ${soak.errors.warmUp})`,
    `  rps ${soak.rps}   p50 ${soak.p50Ms} ms   p99 ${soak.p99Ms} ms   max ${soak.maxMs} ms`,
    `  server RSS ${soak.rss.startMb} MB after warm-up, ${soak.rss.endMb} MB at the end (max ${soak.rss.maxMb} MB): ${signed(soak.rss.growthPercent)}%`,
    ...(soak.rss.settledMb === undefined
      ? []
      : [
          `  RSS ${soak.rss.settledMb} MB at ${soak.rss.settledAtSeconds} s (settled), end ${signed(soak.rss.settledGrowthPercent ?? 0)}% from there`,
        ]),
    `  load average ${soak.loadAverage.before} before, ${soak.loadAverage.duringMean} mean / ${soak.loadAverage.duringMax} max during; Node ${machine.node}, PostgreSQL ${machine.postgres}, ${machine.cpu}`,
  ];
  for (const route of soak.routes)
    lines.push(
      `    ${route.route.padEnd(38)} ${String(route.requests).padStart(8)} req   p50 ${String(route.p50Ms).padStart(6)} ms   p99 ${String(route.p99Ms).padStart(6)} ms${route.non2xx ? `   non-2xx ${route.non2xx} ${JSON.stringify(route.statusCodes)}` : ''}`,
    );
  lines.push(
    soak.passed
      ? `  goals met (0 errors, ${soak.rss.settledMb === undefined ? 'RSS growth under 10%' : 'RSS within 5% of its settled value'})`
      : `  GOALS MISSED: ${soak.failures.join('; ')}`,
  );
  return lines.join('\n');
}

/**
 * Writes the parts that ran into results/latest.json over the file's previous content, so a run of
 * one part (BENCH_ONLY=soak) keeps the others' last figures; partsMeasuredAt says when each ran.
 */
function previousResults(): Record<string, unknown> {
  if (existsSync(RESULTS_FILE)) {
    try {
      return JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as Record<string, unknown>;
    } catch {
      console.error(`${RESULTS_FILE} is not JSON: replaced`);
    }
  }
  return {};
}

function writeResults(parts: Record<string, unknown>): void {
  const previous = previousResults();
  const measuredAt = new Date().toISOString();
  const partsMeasuredAt = {
    ...(typeof previous.partsMeasuredAt === 'object' ? previous.partsMeasuredAt : {}),
    ...Object.fromEntries([...PARTS].map((part) => [part === 'soak' ? SOAK_RESULTS_KEY : part, measuredAt])),
  };
  mkdirSync(join(RESULTS_FILE, '..'), { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify({ ...previous, measuredAt, partsMeasuredAt, ...parts }, null, 2)}\n`);
}

/** This run's scenario results, with the last figures of those it did not run, in the table's order. */
function mergedScenarios(ran: { scenario: string }[]): unknown[] {
  const previous = previousResults().results;
  const kept = Array.isArray(previous) ? (previous as { scenario: string }[]) : [];
  return scenarios.flatMap(
    (s) => ran.find((r) => r.scenario === s.name) ?? kept.find((r) => r.scenario === s.name) ?? [],
  );
}

async function main(): Promise<void> {
  const servers: ServerProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'cebs-bench-'));
  const stopAll = () => Promise.all(servers.map((server) => server.stop()));
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Other work on the machine skews the numbers: recorded so a noisy run can be told apart.
  const loadBefore = round(loadavg()[0] ?? 0);
  try {
    // Children get the defaults the service runs with (scrypt cost, pool size), not this shell's.
    const { PASSWORD_HASH_LOG_N: _logN, DATABASE_URL: _url, ...inherited } = process.env;
    const env = { ...inherited, DATABASE_URL: BENCH_URL, JWT_SECRET, LOG_LEVEL: 'ERROR', DATA_DIR: dataDir };
    if (PARTS.has('http')) {
      console.error(`bench database ${BENCH_URL} (dropped and recreated)`);
      await recreateDatabase();
      const entries: Record<Target, string> = {
        service: 'infra/local/server.ts',
        baseline: 'test/bench/baseline-server.ts',
        'baseline-cached': 'test/bench/baseline-server.ts',
      };
      for (const name of TARGETS) {
        const port = await freePort();
        const cache = name === 'baseline-cached' ? { BASELINE_PROFILE_CACHE: '1' } : {};
        servers.push(
          new ServerProcess(name, entries[name], `http://127.0.0.1:${port}`, { ...env, ...cache, PORT: String(port) }),
        );
      }
      await Promise.all(servers.map((server) => server.waitHealthy()));
    }
    const url = (name: Target) => servers.find((server) => server.name === name)!.url;

    const scrypt = PARTS.has('http') ? await seedUsers(url('service')) : { logN: 0, r: 0, p: 0 };
    if (PARTS.has('http')) {
      await checkSameAnswers(url('service'), url('baseline'), 0);
      await checkSameAnswers(url('service'), url('baseline-cached'), 1);
    }

    const results: ScenarioResult[] = [];
    // BENCH_HTTP_SCENARIOS=profile measures GET /user/profile alone: 32 scrypt sign-ins at once
    // outlast the login route's function timeout (503) when other work shares the two cores.
    const only = process.env.BENCH_HTTP_SCENARIOS?.split(',').map((name) => name.trim());
    const selected = scenarios.filter((s) => !only || only.some((name) => s.path.endsWith(name)));
    for (const scenario of PARTS.has('http') ? selected : []) {
      const measured = {} as Partial<Record<Target, Measurement>>;
      for (const target of scenario.targets) {
        const label = `${scenario.name} on ${target}`;
        console.error(`${label}: warm-up ${WARMUP_SECONDS} s, then ${SECONDS} s at ${CONNECTIONS} connections`);
        const perConnection = await scenario.requests(url(target));
        await load(url(target), scenario, perConnection, WARMUP_SECONDS, `${label} (warm-up)`, true);
        measured[target] = await load(url(target), scenario, perConnection, SECONDS, label);
      }
      const service = measured.service!;
      const ratioTo = (other: Measurement) => ({
        rps: service.rps / other.rps,
        p50: service.p50Ms / other.p50Ms,
        p99: service.p99Ms / other.p99Ms,
      });
      const cached = measured['baseline-cached'];
      results.push({
        scenario: scenario.name,
        service,
        baseline: measured.baseline!,
        ratio: ratioTo(measured.baseline!),
        ...(cached ? { 'baseline-cached': cached, ratioToCached: ratioTo(cached) } : {}),
      });
    }

    const cpu = cpus();
    const pg = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    const [{ server_version: postgresVersion } = { server_version: 'unknown' }] = await pg<
      { server_version: string }[]
    >`show server_version`;
    await pg.end({ timeout: 5 });
    const settings = {
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      connections: CONNECTIONS,
      scrypt,
      node: process.version,
      postgres: postgresVersion,
      cpu: `${cpu.length} x ${cpu[0]?.model.trim() ?? 'unknown'}`,
      loadAverageBefore: loadBefore,
    };
    if (results.length)
      console.log(
        report(results, [
          `${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections, autocannon`,
          `scrypt password hash: log2 N = ${scrypt.logN}, r = ${scrypt.r}, p = ${scrypt.p} (same stored hash for both servers)`,
          `Node ${settings.node}, PostgreSQL ${settings.postgres}, ${settings.cpu}, load average ${loadBefore} before the run`,
        ]),
      );

    const roundedRatio = ({ rps, p50, p99 }: ScenarioResult['ratio']) => ({
      rps: round(rps),
      p50: round(p50),
      p99: round(p99),
    });
    const rounded = results.map((result) => ({
      scenario: result.scenario,
      ...Object.fromEntries(
        TARGETS.flatMap((target) => {
          const m = result[target];
          if (!m) return [];
          return [
            [
              target,
              { rps: round(m.rps, 1), p50Ms: round(m.p50Ms, 1), p99Ms: round(m.p99Ms, 1), requests: m.requests },
            ],
          ];
        }),
      ),
      ratio: roundedRatio(result.ratio),
      ...(result.ratioToCached ? { ratioToCached: roundedRatio(result.ratioToCached) } : {}),
    }));
    await stopAll();
    servers.length = 0;
    const audit = PARTS.has('audit')
      ? await benchAuditCost({
          adminUrl: ADMIN_URL,
          env,
          seconds: SECONDS,
          warmupSeconds: WARMUP_SECONDS,
          connections: CONNECTIONS,
          rounds: AUDIT_ROUNDS,
          onServer: (server) => servers.push(server),
        })
      : undefined;
    if (audit) {
      console.log(auditReport(audit, settings));
      // As the soak's goals: a missed target fails the run, after the figures are kept.
      if (!audit.passed) process.exitCode = 1;
      await stopAll();
      servers.length = 0;
    }
    // The in-process parts sign tokens and log like the service does.
    process.env.JWT_SECRET ??= JWT_SECRET;
    process.env.LOG_LEVEL ??= 'ERROR';
    const handlerCpu = PARTS.has('handler-cpu') ? await benchHandlerCpu(ADMIN_URL) : undefined;
    if (handlerCpu) console.log(handlerCpuReport(handlerCpu));
    const billingReport = PARTS.has('report') ? await benchBillingReport(ADMIN_URL) : undefined;
    if (billingReport) {
      console.log(
        `\nPOST /billing/report, ${billingReport.rows.toLocaleString('en-US')} rows (each format in a fresh process):`,
      );
      for (const format of ['json', 'pdf'] as const) {
        const r = billingReport[format];
        console.log(
          `  ${format.padEnd(4)} ${String(r.elapsedMs).padStart(6)} ms (CPU ${r.cpuMs} ms)   peak RSS ${r.peakRssMb} MB (${r.startRssMb} MB before the report)   ${(r.payloadBytes / 1024 / 1024).toFixed(1)} MB out`,
        );
      }
      const compression = billingReport.json.compression;
      if (compression) {
        const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
        const line = (name: 'br' | 'gzip') =>
          `${name} ${mb(compression[name].bytes)} in ${compression[name].ms} ms (result ${mb(compression[name].resultBytes)})`;
        console.log(
          `  json compressed (${mb(compression.envelopeBytes)}, plain result ${mb(compression.plainResultBytes)}, limit ${mb(compression.limitBytes)}): ${line('br')}, ${line('gzip')}`,
        );
      }
      const t = billingReport.targets;
      console.log(
        `  PDF time / JSON time ${billingReport.pdfToJsonTime}x; targets: JSON peak <= ${t.jsonPeakRssMb} MB, PDF peak <= ${t.pdfPeakRssMb} MB, ratio <= ${t.pdfToJsonTime}x: ${billingReport.passed ? 'met' : 'MISSED'}`,
      );
      if (!billingReport.passed) process.exitCode = 1;
    }
    const material = PARTS.has('material') ? await benchMaterial(ADMIN_URL) : undefined;
    if (material) {
      console.log(`\nCase material (in-process through the handlers; seeded in ${material.seed.seedSeconds} s):`);
      for (const r of material.results)
        console.log(`  p50 ${String(r.p50Ms).padStart(7)} ms   p99 ${String(r.p99Ms).padStart(7)} ms   ${r.name}`);
      console.log(`  search p50 at 1,000,000 / at 100,000 messages: ${material.searchP50Growth}x`);
    }
    const imports = PARTS.has('imports')
      ? await benchImports(ADMIN_URL, { scale: importScale(), nodeFlags: importNodeFlags(), env })
      : undefined;
    if (imports) {
      console.log(importsReport(imports));
      // As the audit target: a missed rate or memory target fails the run, after the figures are kept.
      if (!imports.passed) process.exitCode = 1;
    }
    const auditVerify = PARTS.has('verify') ? await benchAuditVerify(ADMIN_URL) : undefined;
    if (auditVerify) {
      console.log(auditVerifyReport(auditVerify));
      if (!auditVerify.passed) process.exitCode = 1;
    }
    const review = PARTS.has('review')
      ? await benchReview({ adminUrl: ADMIN_URL, env, onServer: (server) => servers.push(server) })
      : undefined;
    if (review) {
      console.log(reviewReport(review, settings));
      if (!review.passed) process.exitCode = 1;
      await stopAll();
      servers.length = 0;
    }
    const scale = PARTS.has('scale')
      ? await benchScale({ adminUrl: ADMIN_URL, env, onServer: (server) => servers.push(server) })
      : undefined;
    if (scale) {
      console.log(scaleReport(scale, settings));
      if (!scale.passed) process.exitCode = 1;
      await stopAll();
      servers.length = 0;
    }
    const soak = PARTS.has('soak')
      ? await benchSoak({
          adminUrl: ADMIN_URL,
          env,
          seconds: SOAK_SECONDS,
          warmupSeconds: SOAK_WARMUP_SECONDS,
          connections: CONNECTIONS,
          users: SOAK_USERS,
          database: SOAK_DATABASE,
          heapSnapshotDir: process.env.BENCH_SOAK_HEAPSNAPSHOTS,
          onServer: (server) => servers.push(server),
        })
      : undefined;
    if (soak) {
      console.log(soakReport(soak, settings));
      // Like a non-2xx answer in the other parts, a missed goal fails the run, after the figures are kept.
      if (!soak.passed) process.exitCode = 1;
    }
    writeResults({
      // A run of some scenarios (BENCH_HTTP_SCENARIOS) keeps the others' last figures.
      ...(PARTS.has('http') ? { settings, results: mergedScenarios(rounded) } : {}),
      ...(audit
        ? { audit: { ...audit, machine: { node: settings.node, postgres: settings.postgres, cpu: settings.cpu } } }
        : {}),
      ...(handlerCpu ? { handlerCpu } : {}),
      ...(billingReport ? { billingReport } : {}),
      ...(material ? { material } : {}),
      // A run of some of the import cases (BENCH_IMPORT_CASES) keeps the others' last figures.
      ...(auditVerify ? { auditVerify } : {}),
      ...(imports ? { imports: { ...(previousResults().imports as object | undefined), ...imports } } : {}),
      ...(review
        ? { review: { ...review, machine: { node: settings.node, postgres: settings.postgres, cpu: settings.cpu } } }
        : {}),
      ...(soak ? { [SOAK_RESULTS_KEY]: soak } : {}),
      ...(scale
        ? { scale: { ...scale, machine: { node: settings.node, postgres: settings.postgres, cpu: settings.cpu } } }
        : {}),
    });
    console.error(`results written to ${RESULTS_FILE}`);
  } finally {
    await stopAll();
    rmSync(dataDir, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
