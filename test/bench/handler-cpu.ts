import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { routes } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { loadHandler } from '../../infra/local/router';
import { now } from '../../lib/clock';
import { closeDb, useConnection } from '../../lib/db/client';
import type { RouteDefinition } from '../../lib/http/route';
import { createBaseline, HttpFailure } from './baseline';
import { freshBenchDatabase } from './fresh-database';

/**
 * `BENCH_ONLY=handler-cpu`: the CPU a `GET /user/profile` costs inside the Lambda handler, the
 * time Lambda bills, measured in-process with no HTTP: the real handler (functions/user/
 * get-profile.ts, every middleware) called with an API Gateway event in a loop, beside a bare
 * handler running the same SQL as baseline-cached (baseline.ts: JWT verification, the session
 * statement, the 60-second profile cache) in the same process, on the same database. Rounds
 * alternate service and bare; each reports microseconds of CPU (process.cpuUsage, user + system)
 * per request, and the wall time. The event is built per call on both sides (as the local server
 * does, its cost printed apart); Postgres's own CPU is in its process and not counted.
 *
 * `node --import tsx test/bench/handler-cpu.ts` runs it alone (HANDLER_CPU_ONLY=service or bare
 * to loop one side only, for `node --cpu-prof`).
 */

const REQUESTS = Number(process.env.BENCH_HANDLER_CPU_REQUESTS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_HANDLER_CPU_ROUNDS ?? 9);
const WARMUP = Number(process.env.BENCH_HANDLER_CPU_WARMUP ?? 1_000);

export interface HandlerCpuSide {
  /** Median over the rounds. */
  cpuUsPerRequest: number;
  /** The least over the rounds: the figure least moved by other work on the machine. */
  minCpuUsPerRequest: number;
  wallUsPerRequest: number;
  rounds: number[];
}

export interface HandlerCpuResult {
  route: string;
  requestsPerRound: number;
  rounds: number;
  service: HandlerCpuSide;
  bare: HandlerCpuSide;
  /** service / bare CPU per request (medians). */
  cpuRatio: number;
  /** service / bare of the least CPU per request of any round. */
  minCpuRatio: number;
  /** CPU of building one API Gateway event (the local server's share; Lambda's runtime does it in the cloud). */
  eventBuildUs: number;
  loadAverage: { before: number; after: number };
  node: string;
  cpu: string;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const round1 = (value: number) => Math.round(value * 10) / 10;
const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 100) / 100 : 0);

type Call = () => Promise<void>;

/** CPU and wall microseconds per call of `count` serial calls. */
async function timed(call: Call, count: number): Promise<{ cpu: number; wall: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i += 1) await call();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / count, wall: (wall * 1000) / count };
}

async function seedToken(): Promise<string> {
  const invoke = async (route: RouteDefinition, body: unknown) => {
    const handler = await loadHandler(route);
    const event = buildApiGatewayEvent(
      route,
      {
        method: route.method,
        url: route.path,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      {},
    );
    const result = await handler(event, buildLambdaContext(route));
    if (result.statusCode !== 200) throw new Error(`${route.path} answered ${result.statusCode}: ${result.body}`);
    return JSON.parse(result.body ?? '{}') as { data: { accessToken: string } };
  };
  const credentials = { email: 'bench-cpu@example.com', password: 'bench-password-0123' };
  await invoke(routes.register, { name: 'Bench CPU', ...credentials, acceptTerms: true });
  return (await invoke(routes.login, credentials)).data.accessToken;
}

export async function benchHandlerCpu(adminUrl: string): Promise<HandlerCpuResult> {
  const loadBefore = round1(loadavg()[0] ?? 0);
  const { url, connection } = await freshBenchDatabase(adminUrl, 'cebs_bench_cpu', 2);
  useConnection(connection);
  // The bare side's own pool, as the baseline server's (prepared tagged templates).
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  try {
    const token = await seedToken();
    const route = routes.getProfile;
    const serviceHandler = await loadHandler(route);
    const bare = createBaseline(sql, { profileCacheMs: 60_000, refreshTokenTtlDays: 30 });
    const request = { method: 'GET', url: '/user/profile', headers: { authorization: `Bearer ${token}` } };
    const event = () => buildApiGatewayEvent(route, request, {});

    let serviceBody = '';
    const service: Call = async () => {
      const result = await serviceHandler(event(), buildLambdaContext(route));
      if (result.statusCode !== 200) throw new Error(`service answered ${result.statusCode}: ${result.body}`);
      serviceBody = result.body ?? '';
    };
    let bareBody = '';
    // A bare Lambda handler: the event's authorization header, the baseline's statements, the envelope.
    const bareHandler: Call = async () => {
      const apiEvent = event();
      let statusCode = 200;
      let body: string;
      try {
        const data = await bare.profile(apiEvent.headers.authorization);
        body = JSON.stringify({ data, statusCode, timestamp: now().toISOString() });
      } catch (error) {
        statusCode = error instanceof HttpFailure ? error.statusCode : 500;
        body = JSON.stringify({ statusCode, error: { code: String(error) } });
      }
      const result = { statusCode, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }, body };
      if (result.statusCode !== 200) throw new Error(`bare answered ${result.statusCode}: ${result.body}`);
      bareBody = result.body;
    };

    const only = process.env.HANDLER_CPU_ONLY;
    await timed(service, WARMUP);
    await timed(bareHandler, WARMUP);
    const strip = (body: string) => ({ ...(JSON.parse(body) as object), timestamp: 'x' });
    if (JSON.stringify(strip(serviceBody)) !== JSON.stringify(strip(bareBody)))
      throw new Error(`handler-cpu: the bare answer differs from the service's:\n${serviceBody}\n${bareBody}`);
    const sides = { service: [] as { cpu: number; wall: number }[], bare: [] as { cpu: number; wall: number }[] };
    for (let r = 0; r < ROUNDS; r += 1) {
      if (only !== 'bare') sides.service.push(await timed(service, REQUESTS));
      if (only !== 'service') sides.bare.push(await timed(bareHandler, REQUESTS));
    }
    const buildCpu = process.cpuUsage();
    for (let i = 0; i < 20_000; i += 1) event();
    const built = process.cpuUsage(buildCpu);
    const summary = (runs: { cpu: number; wall: number }[]): HandlerCpuSide => ({
      cpuUsPerRequest: runs.length ? round1(median(runs.map((r) => r.cpu))) : 0,
      minCpuUsPerRequest: runs.length ? round1(Math.min(...runs.map((r) => r.cpu))) : 0,
      wallUsPerRequest: runs.length ? round1(median(runs.map((r) => r.wall))) : 0,
      rounds: runs.map((r) => round1(r.cpu)),
    });
    const serviceSide = summary(sides.service);
    const bareSide = summary(sides.bare);
    const cpu = cpus();
    return {
      route: 'GET /user/profile',
      requestsPerRound: REQUESTS,
      rounds: ROUNDS,
      service: serviceSide,
      bare: bareSide,
      cpuRatio: ratio(serviceSide.cpuUsPerRequest, bareSide.cpuUsPerRequest),
      minCpuRatio: ratio(serviceSide.minCpuUsPerRequest, bareSide.minCpuUsPerRequest),
      eventBuildUs: round1((built.user + built.system) / 20_000),
      loadAverage: { before: loadBefore, after: round1(loadavg()[0] ?? 0) },
      node: process.version,
      cpu: `${cpu.length} x ${cpu[0]?.model.trim() ?? 'unknown'}`,
    };
  } finally {
    await sql.end({ timeout: 5 });
    await closeDb();
  }
}

export function handlerCpuReport(r: HandlerCpuResult): string {
  const side = (label: string, s: HandlerCpuSide) =>
    `  ${label.padEnd(38)} ${String(s.cpuUsPerRequest).padStart(7)} us CPU (least ${s.minCpuUsPerRequest})   ${String(s.wallUsPerRequest).padStart(7)} us wall   rounds ${s.rounds.join(' / ')}`;
  return [
    `\nHandler CPU per request, in-process (no HTTP): ${r.route}, ${r.rounds} rounds of ${r.requestsPerRound} serial calls, alternating; median`,
    side('service (functions/user/get-profile)', r.service),
    side('bare handler, same SQL (cached)', r.bare),
    `  service / bare CPU ${r.cpuRatio}x (least of each: ${r.minCpuRatio}x); building the API Gateway event ${r.eventBuildUs} us (in both)`,
    `  load average ${r.loadAverage.before} before, ${r.loadAverage.after} after; Node ${r.node}, ${r.cpu}`,
  ].join('\n');
}

if (process.argv[1]?.endsWith('handler-cpu.ts')) {
  process.env.JWT_SECRET ??= 'cebs-bench-only-jwt-secret-0123456789abcdefghijk';
  process.env.LOG_LEVEL ??= 'ERROR';
  const result = await benchHandlerCpu(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  console.log(handlerCpuReport(result));
}
