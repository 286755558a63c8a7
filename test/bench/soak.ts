import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freshBenchDatabase } from './fresh-database';
import { freePort, ServerProcess } from './server-process';

/**
 * The soak part of `npm run bench` (BENCH_ONLY=soak): the local server on a fresh Postgres
 * database under a mix of reads and writes for minutes, counting every failed request and watching
 * the server's RSS for growth. Users sign in (register) once before the run, never in the loop.
 */

/** BENCH_SOAK_DATABASE_NAME lets two soaks run side by side (an A/B of a server setting). */
const SOAK_DATABASE = process.env.BENCH_SOAK_DATABASE_NAME ?? 'cebs_bench_soak';
const PASSWORD = 'soak-password-0123';
/**
 * Goals: no failed request (issue 15); RSS at the end within 5% of its value 5 minutes after the
 * warm-up for a soak of 10 minutes or more (issue 36: the heap and the allocator have settled by
 * then, so later growth is a leak), and within 10% of the warm-up's value for a shorter soak.
 */
export const SOAK_GOALS = {
  errors: 0,
  settleSeconds: 300,
  settledGrowthPercentAtMost: 5,
  shortGrowthPercentBelow: 10,
} as const;
const settleSecondsFor = (seconds: number) => (seconds >= 600 ? SOAK_GOALS.settleSeconds : 0);

export interface SoakOptions {
  adminUrl: string;
  /** Environment of the server child (JWT_SECRET, LOG_LEVEL, DATA_DIR); DATABASE_URL and PORT are set here. */
  env: NodeJS.ProcessEnv;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  users: number;
  /** `postgres`: a fresh database beside adminUrl; `pglite`: the embedded default of `npm start`, in a fresh DATA_DIR. */
  database: 'postgres' | 'pglite';
  /** Heap snapshots (SIGUSR2) after the warm-up, at the settle point and at the end, written here. */
  heapSnapshotDir?: string;
  /** Told the server process as soon as it starts, so the runner can stop it on SIGINT. */
  onServer?(server: ServerProcess): void;
}

interface SoakUser {
  index: number;
  token: string;
  organizationId: string;
}

interface Context {
  user?: SoakUser;
  tokenId?: string;
  route?: string;
}

interface RouteTally {
  requests: number;
  statusCodes: Record<string, number>;
  latencies: number[];
  /** The first few non-2xx answers, for the report. */
  failures: string[];
}

interface Step {
  route: string;
  kind: 'read' | 'write';
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path and body for this user; null skips the rest of the cycle (no token to revoke). */
  build(user: SoakUser, context: Context): { path: string; body?: unknown } | null;
  onAnswer?(status: number, body: string, context: Context): void;
}

let profileEdits = 0;

/**
 * One cycle of a connection, 7 reads and 3 writes; each cycle takes the next user, so the 32
 * connections spread over every user and organization. The token write grows the sessions table
 * by one revoked row per cycle.
 */
const MIX: Step[] = [
  { route: 'GET /user/profile', kind: 'read', method: 'GET', build: () => ({ path: '/user/profile' }) },
  {
    route: 'GET /organization/{orgId}',
    kind: 'read',
    method: 'GET',
    build: (user) => ({ path: `/organization/${user.organizationId}` }),
  },
  {
    route: 'GET /organization/{orgId}/members',
    kind: 'read',
    method: 'GET',
    build: (user) => ({ path: `/organization/${user.organizationId}/members` }),
  },
  {
    route: 'PATCH /user/profile',
    kind: 'write',
    method: 'PATCH',
    build: (user) => {
      profileEdits += 1;
      return { path: '/user/profile', body: { name: `Soak User ${user.index}`, onboardingStep: profileEdits } };
    },
  },
  { route: 'GET /billing/plan/current', kind: 'read', method: 'GET', build: () => ({ path: '/billing/plan/current' }) },
  {
    route: 'POST /auth/generate-token',
    kind: 'write',
    method: 'POST',
    build: () => ({ path: '/auth/generate-token', body: { scopes: ['profile:read'], label: 'soak', ttlDays: 1 } }),
    onAnswer: (status, body, context) => {
      if (status !== 200) return;
      context.tokenId = (JSON.parse(body) as { data: { id: string } }).data.id;
    },
  },
  {
    route: 'GET /organization/user/organizations',
    kind: 'read',
    method: 'GET',
    build: () => ({ path: '/organization/user/organizations' }),
  },
  {
    route: 'DELETE /auth/tokens/{id}',
    kind: 'write',
    method: 'DELETE',
    build: (_user, context) => (context.tokenId ? { path: `/auth/tokens/${context.tokenId}` } : null),
  },
  {
    route: 'GET /billing/plans',
    kind: 'read',
    method: 'GET',
    build: () => ({ path: '/billing/plans' }),
  },
  { route: 'GET /user/profile', kind: 'read', method: 'GET', build: () => ({ path: '/user/profile' }) },
];

export const SOAK_MIX = Object.entries(
  MIX.reduce<Record<string, number>>((shares, step) => {
    shares[step.route] = (shares[step.route] ?? 0) + 1;
    return shares;
  }, {}),
).map(([route, steps]) => ({ route, percent: (steps * 100) / MIX.length }));

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/**
 * Signs up user `index` from loopback address 127.0.0.(2 + index / 8): sign-up is limited to 10 a
 * minute per client address, so each address signs up at most 8 users (PGlite's database cannot be
 * reached from here to clear the counters, as the http part does).
 */
async function register(url: string, index: number): Promise<SoakUser> {
  const body = JSON.stringify({
    name: `Soak User ${index}`,
    email: `soak-${index}@example.com`,
    password: PASSWORD,
    acceptTerms: true,
    organizationName: `Soak Organization ${index}`,
  });
  const { status, text } = await new Promise<{ status: number; text: string }>((answered, failed) => {
    const sent = request(
      `${url}/auth/register`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        localAddress: `127.0.0.${2 + Math.floor(index / 8)}`,
      },
      (response) => {
        let received = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (received += chunk));
        response.on('end', () => answered({ status: response.statusCode ?? 0, text: received }));
        response.on('error', failed);
      },
    );
    sent.on('error', failed);
    sent.end(body);
  });
  if (status !== 200) throw new Error(`POST /auth/register answered ${status}: ${text}`);
  const { data } = JSON.parse(text) as {
    data: { accessToken: string; organizationInfo?: { organization?: { id?: string } } };
  };
  const organizationId = data.organizationInfo?.organization?.id;
  if (!organizationId) throw new Error(`POST /auth/register: no organization in ${text.slice(0, 500)}`);
  return { index, token: data.accessToken, organizationId };
}

/** The mix as autocannon requests; every answer is tallied by route. */
function requests(users: SoakUser[], tallies: Map<string, RouteTally>) {
  let nextUser = 0;
  return MIX.map((step, position) => ({
    method: step.method,
    setupRequest: (request: Record<string, unknown>, context: Context) => {
      if (position === 0) context.user = users[nextUser++ % users.length];
      const user = context.user!;
      const built = step.build(user, context);
      if (!built) return null;
      const headers: Record<string, string> = {
        authorization: `Bearer ${user.token}`,
        organization: user.organizationId,
      };
      if (built.body !== undefined) headers['content-type'] = 'application/json';
      // Writes carry a fresh Idempotency-Key, as the apps send them: each one claims and stores an answer.
      if (step.method !== 'GET') headers['idempotency-key'] = randomUUID();
      return {
        ...request,
        method: step.method,
        path: built.path,
        headers,
        ...(built.body === undefined ? {} : { body: JSON.stringify(built.body) }),
      };
    },
    onResponse: (status: number, body: string, context: Context) => {
      context.route = step.route;
      const tally = tallies.get(step.route)!;
      tally.statusCodes[status] = (tally.statusCodes[status] ?? 0) + 1;
      if ((status < 200 || status > 299) && tally.failures.length < 5)
        tally.failures.push(`${status} ${body.slice(0, 300)}`);
      step.onAnswer?.(status, body, context);
    },
  }));
}

async function drive(url: string, users: SoakUser[], seconds: number, connections: number) {
  const tallies = new Map<string, RouteTally>(
    MIX.map((step) => [step.route, { requests: 0, statusCodes: {}, latencies: [], failures: [] }]),
  );
  let finished!: (outcome: { error: Error | null; result: autocannon.Result }) => void;
  const outcome = new Promise<{ error: Error | null; result: autocannon.Result }>((settle) => (finished = settle));
  const instance = autocannon(
    {
      url,
      connections,
      duration: seconds,
      // autocannon's types want setupRequest to return a request; null restarts the cycle at runtime.
      requests: requests(users, tallies) as unknown as autocannon.Request[],
    },
    (error, result) => finished({ error, result }),
  );
  instance.on('response', (client, _status, _bytes, responseTime) => {
    const route = (client as unknown as { requestIterator: { context: Context } }).requestIterator.context.route;
    const tally = route === undefined ? undefined : tallies.get(route);
    if (!tally) return;
    tally.requests += 1;
    tally.latencies.push(responseTime);
  });
  const { error, result } = await outcome;
  if (error) throw error;
  return { result, tallies };
}

export async function benchSoak(options: SoakOptions) {
  const { adminUrl, seconds, warmupSeconds, connections } = options;
  const port = await freePort();
  const { DATABASE_URL: _inherited, ...env } = options.env;
  const pgliteDir = options.database === 'pglite' ? mkdtempSync(join(tmpdir(), 'cebs-soak-pglite-')) : undefined;
  const fresh = pgliteDir ? undefined : await freshBenchDatabase(adminUrl, SOAK_DATABASE);
  await fresh?.connection.close();
  const database = fresh ? { DATABASE_URL: fresh.url } : { DATA_DIR: pgliteDir };
  const snapshots = options.heapSnapshotDir;
  if (snapshots) mkdirSync(snapshots, { recursive: true });
  const server = new ServerProcess(
    'soak',
    'infra/local/server.ts',
    `http://127.0.0.1:${port}`,
    {
      ...env,
      ...database,
      PORT: String(port),
      // Access tokens are taken once before the run: they must outlive it.
      ACCESS_TOKEN_TTL_SECONDS: String(Math.max(900, warmupSeconds + seconds + 600)),
    },
    [
      '--import',
      './test/bench/memory-probe.ts',
      ...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : []),
      // BENCH_SOAK_NODE_FLAGS: more flags for the server (`--trace-gc` shows every isolate's heap, threads too).
      ...(process.env.BENCH_SOAK_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
    ],
  );
  options.onServer?.(server);
  try {
    await server.waitHealthy();
    console.error(`soak: registering ${options.users} users (one sign-in each, scrypt)`);
    const users: SoakUser[] = [];
    for (let index = 0; index < options.users; index += 1) users.push(await register(server.url, index));

    console.error(`soak: warm-up ${warmupSeconds} s at ${connections} connections`);
    const warmUp = await drive(server.url, users, warmupSeconds, connections);
    const warmUpErrors = warmUp.result.non2xx + warmUp.result.errors;

    const loadBefore = loadavg()[0] ?? 0;
    const started = Date.now();
    const settleSeconds = settleSecondsFor(seconds);
    const samples: {
      atSeconds: number;
      rssMb: number;
      loadAverage: number;
      heapUsedMb?: number;
      heapTotalMb?: number;
      externalMb?: number;
      threadHeapsMb?: number;
      threads?: number;
    }[] = [];
    const sample = () => {
      const main = server.memory.get(0);
      const threads = [...server.memory.values()].filter((reading) => reading.thread !== 0);
      const reading = {
        atSeconds: round((Date.now() - started) / 1000, 0),
        rssMb: round(server.rssMb()),
        loadAverage: round(loadavg()[0] ?? 0, 2),
        ...(main && {
          heapUsedMb: main.heapUsedMb,
          heapTotalMb: main.heapTotalMb,
          externalMb: main.externalMb,
          // What the other threads' heaps hold, each its own isolate (import threads, PGlite's thread).
          threadHeapsMb: round(threads.reduce((sum, thread) => sum + thread.heapTotalMb, 0)),
          threads: threads.length,
        }),
      };
      samples.push(reading);
      console.error(
        `soak: ${reading.atSeconds} s RSS ${reading.rssMb} MB (main JS heap ${reading.heapUsedMb ?? '?'} of ${reading.heapTotalMb ?? '?'} MB, ${reading.threads ?? '?'} threads' heaps ${reading.threadHeapsMb ?? '?'} MB)`,
      );
    };
    const snapshot = (label: string) => {
      if (!snapshots) return;
      console.error(`soak: heap snapshot (${label}) into ${snapshots}`);
      server.signal('SIGUSR2');
    };
    sample();
    snapshot('after warm-up');
    // About 120 readings whatever the length, at least 5 s apart (the probe writes every 5 s).
    const sampler = setInterval(sample, Math.max(5, Math.round(seconds / 120)) * 1000);
    const settleSnapshot = settleSeconds ? setTimeout(() => snapshot('settled'), settleSeconds * 1000) : undefined;
    console.error(`soak: ${seconds} s at ${connections} connections, RSS ${samples[0]!.rssMb} MB after warm-up`);
    const { result, tallies } = await drive(server.url, users, seconds, connections).finally(() => {
      clearInterval(sampler);
      clearTimeout(settleSnapshot);
    });
    sample();
    snapshot('end');

    const start = samples[0]!.rssMb;
    const end = samples.at(-1)!.rssMb;
    const growthPercent = round(((end - start) / start) * 100);
    // The first reading at or after the settle point is the baseline of a long soak.
    const settled = settleSeconds ? samples.find((s) => s.atSeconds >= settleSeconds) : undefined;
    const settledGrowthPercent = settled ? round(((end - settled.rssMb) / settled.rssMb) * 100) : undefined;
    const errors = result.non2xx + result.errors;
    const byRoute = [...tallies].map(([route, tally]) => {
      const sorted = tally.latencies.sort((a, b) => a - b);
      const non2xx = Object.entries(tally.statusCodes)
        .filter(([code]) => !code.startsWith('2'))
        .reduce((sum, [, count]) => sum + count, 0);
      return {
        route,
        requests: tally.requests,
        non2xx,
        statusCodes: tally.statusCodes,
        p50Ms: round(percentile(sorted, 50)),
        p99Ms: round(percentile(sorted, 99)),
        ...(tally.failures.length ? { failures: tally.failures } : {}),
      };
    });
    const failures: string[] = [];
    if (warmUpErrors > 0) failures.push(`${warmUpErrors} failed requests during the warm-up`);
    if (errors > SOAK_GOALS.errors)
      failures.push(
        `${errors} failed requests (${result.non2xx} non-2xx, ${result.errors - result.timeouts} socket errors, ${result.timeouts} timeouts)`,
      );
    if (settled && settledGrowthPercent !== undefined) {
      if (settledGrowthPercent > SOAK_GOALS.settledGrowthPercentAtMost)
        failures.push(
          `RSS grew ${settledGrowthPercent}% after ${settled.atSeconds} s (${settled.rssMb} MB to ${end} MB), goal at most ${SOAK_GOALS.settledGrowthPercentAtMost}%`,
        );
    } else if (growthPercent >= SOAK_GOALS.shortGrowthPercentBelow)
      failures.push(
        `RSS grew ${growthPercent}% (${start} MB to ${end} MB), goal under ${SOAK_GOALS.shortGrowthPercentBelow}%`,
      );
    const loads = samples.map((s) => s.loadAverage);
    return {
      measuredAt: new Date().toISOString(),
      database: options.database,
      seconds,
      warmupSeconds,
      connections,
      users: options.users,
      mix: SOAK_MIX,
      readPercent: (MIX.filter((step) => step.kind === 'read').length * 100) / MIX.length,
      requests: result.requests.total,
      errors: {
        total: errors,
        non2xx: result.non2xx,
        socketErrors: result.errors - result.timeouts,
        timeouts: result.timeouts,
        warmUp: warmUpErrors,
        statusCodes: Object.fromEntries(
          Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]),
        ),
      },
      /** Cycles cut short because a token to revoke was missing (its POST failed). */
      cycleResets: result.resets,
      rps: round(result['2xx'] / result.duration),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      maxMs: result.latency.max,
      rss: {
        startMb: start,
        endMb: end,
        maxMb: Math.max(...samples.map((s) => s.rssMb)),
        growthPercent,
        ...(settled ? { settledAtSeconds: settled.atSeconds, settledMb: settled.rssMb, settledGrowthPercent } : {}),
        samples,
      },
      // The end snapshot is still being written by the server here: the directory, not a listing.
      ...(snapshots ? { heapSnapshotDir: snapshots } : {}),
      loadAverage: {
        before: round(loadBefore, 2),
        duringMean: round(loads.reduce((sum, load) => sum + load, 0) / loads.length, 2),
        duringMax: Math.max(...loads),
      },
      routes: byRoute,
      goals: SOAK_GOALS,
      passed: failures.length === 0,
      failures,
    };
  } finally {
    // autocannon drops its sockets at the deadline with requests still running in the server; the
    // local server's SIGTERM closes the pool without waiting for them (they fail with 500s), so let
    // them finish first.
    await new Promise((wait) => setTimeout(wait, 2_000));
    await server.stop();
    if (pgliteDir) rmSync(pgliteDir, { recursive: true, force: true });
  }
}

export type SoakResult = Awaited<ReturnType<typeof benchSoak>>;
