import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { freshBenchDatabase } from './fresh-database';
import { freePort, ServerProcess } from './server-process';

/**
 * The audit part of `npm run bench`: what the audit write adds to a mutating route. Two local
 * servers on one fresh database, the same code, one of them started with
 * `--import ./test/bench/without-audit.ts` (no audit writes in that process); both take
 * PATCH /cases/{caseId} renames of one case, each an update plus one `case.updated` event, all in
 * one organization: the worst case, every request takes the same chain head lock. The servers
 * alternate (with, without, with, without…) so a change of load on the machine hits both.
 */

const AUDIT_DATABASE = 'cebs_bench_audit';
const PASSWORD = 'audit-bench-password-0123';
export const AUDIT_ROUTE = 'PATCH /cases/{caseId}';
/** Goal of issue 35 (issue 16 had under 1.15x): the audit write costs at most 10% of the route's median latency. */
export const AUDIT_TARGET = { p50RatioAtMost: 1.1 } as const;

export interface AuditBenchOptions {
  adminUrl: string;
  /** Environment of the server children (JWT_SECRET, LOG_LEVEL, DATA_DIR); DATABASE_URL and PORT are set here. */
  env: NodeJS.ProcessEnv;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** Runs per server, alternating: 2 gives with, without, with, without. */
  rounds: number;
  /** Told each server process as soon as it starts, so the runner can stop it on SIGINT. */
  onServer?(server: ServerProcess): void;
}

type Variant = 'withAudit' | 'withoutAudit';
const VARIANTS: readonly Variant[] = ['withAudit', 'withoutAudit'];
const LABEL: Record<Variant, string> = { withAudit: 'with audit', withoutAudit: 'without audit' };

interface Seed {
  token: string;
  organizationId: string;
  caseId: string;
}

interface AuditRun {
  variant: Variant;
  round: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** 2xx answers (every other answer fails the run). */
  requests: number;
  /** Requests sent: those beyond `requests` were cut off at the deadline, still running in the server. */
  sent: number;
  /** Growth of audit_events over the measured run (warm-up excluded, checked apart). */
  auditEventsAdded: number;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function call<T>(
  url: string,
  method: 'POST' | 'PATCH',
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status < 200 || response.status > 299)
    throw new Error(`${method} ${url}${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** One user, its organization and one case, through the real routes. */
async function seed(url: string, index: number): Promise<Seed> {
  const registered = await call<{ accessToken: string; organizationInfo?: { organization?: { id?: string } } }>(
    url,
    'POST',
    '/auth/register',
    {
      name: `Audit Bench User ${index}`,
      email: `audit-bench-${index}@example.com`,
      password: PASSWORD,
      acceptTerms: true,
      organizationName: `Audit Bench Organization ${index}`,
    },
  );
  const organizationId = registered.organizationInfo?.organization?.id;
  if (!organizationId) throw new Error('audit bench: POST /auth/register answered no organization');
  const created = await call<{ id: string }>(
    url,
    'POST',
    '/cases',
    { name: 'Audit bench case' },
    { authorization: `Bearer ${registered.accessToken}`, organization: organizationId },
  );
  return { token: registered.accessToken, organizationId, caseId: created.id };
}

/**
 * PATCH renames for `seconds`; each request a new name (`prefix n`), so each one really changes the
 * case. Latencies are kept here at sub-millisecond precision (autocannon's histogram rounds to 1 ms,
 * too coarse for a ratio of medians near 10 ms). Throws on any non-2xx answer or socket error.
 */
async function drive(
  url: string,
  targets: readonly Seed[],
  seconds: number,
  connections: number,
  prefix: string,
  label: string,
) {
  let nextTarget = 0;
  let sequence = 0;
  const latencies: number[] = [];
  let finished!: (outcome: { error: Error | null; result: autocannon.Result }) => void;
  const outcome = new Promise<{ error: Error | null; result: autocannon.Result }>((settle) => (finished = settle));
  const instance = autocannon(
    {
      url,
      connections,
      duration: seconds,
      requests: [
        {
          method: 'PATCH',
          // Each connection keeps one target (organization and case) for the run.
          setupRequest: (request, context: { target?: Seed }) => {
            context.target ??= targets[nextTarget++ % targets.length]!;
            const { target } = context;
            return {
              ...request,
              path: `/cases/${target.caseId}`,
              headers: {
                authorization: `Bearer ${target.token}`,
                organization: target.organizationId,
                'content-type': 'application/json',
              },
              body: JSON.stringify({ name: `${prefix} ${++sequence}` }),
            };
          },
        },
      ],
    },
    (error, result) => finished({ error, result }),
  );
  instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const { error, result } = await outcome;
  if (error) throw error;
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    const codes = Object.entries(result.statusCodeStats ?? {})
      .map(([code, stats]) => `${code}: ${stats.count ?? 0}`)
      .join(', ');
    throw new Error(
      `${label}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts (status codes ${codes || 'none'}); no numbers reported`,
    );
  }
  if (result['2xx'] === 0) throw new Error(`${label}: no request completed`);
  return { result, latencies: latencies.sort((a, b) => a - b) };
}

/**
 * Checks that the server under test wrote exactly what it should: one event per 2xx answer with the
 * audit trail, none without. Requests cut off at autocannon's deadline may still commit after it
 * (sent - 2xx of them at most), which is why `settledCount` waits for the table to stop growing.
 */
function checkAuditEvents(variant: Variant, label: string, added: number, answered: number, sent: number): void {
  if (variant === 'withoutAudit') {
    if (added !== 0)
      throw new Error(
        `${label}: audit_events grew by ${added} on the server started without audit writes (without-audit.ts not in effect?)`,
      );
    return;
  }
  if (added < answered || added > sent)
    throw new Error(
      `${label}: audit_events grew by ${added} for ${answered} 2xx answers (${sent} sent): expected one case.updated event per request`,
    );
}

type Scenario = 'organizations' | 'oneOrganization';
const SCENARIOS: readonly Scenario[] = ['organizations', 'oneOrganization'];
const SCENARIO_LABEL: Record<Scenario, string> = {
  organizations: 'one organization per connection',
  oneOrganization: 'all in one organization',
};

/** Median over the rounds of each server (rps, p50, p99; requests summed) and with / without. */
function summarize(runs: AuditRun[]) {
  const summary = (variant: Variant) => {
    const own = runs.filter((run) => run.variant === variant);
    return {
      rps: round(median(own.map((run) => run.rps))),
      p50Ms: round(median(own.map((run) => run.p50Ms)), 2),
      p99Ms: round(median(own.map((run) => run.p99Ms)), 2),
      requests: own.reduce((sum, run) => sum + run.requests, 0),
    };
  };
  const withAudit = summary('withAudit');
  const withoutAudit = summary('withoutAudit');
  return {
    withAudit,
    withoutAudit,
    /** with / without: above 1 for latency (below for rps) is what the audit write costs. */
    ratio: {
      rps: round(withAudit.rps / withoutAudit.rps, 3),
      p50: round(withAudit.p50Ms / withoutAudit.p50Ms, 3),
      p99: round(withAudit.p99Ms / withoutAudit.p99Ms, 3),
    },
    runs,
  };
}

export async function benchAuditCost(options: AuditBenchOptions) {
  const { adminUrl, seconds, warmupSeconds, connections, rounds } = options;
  const { url: databaseUrl, connection } = await freshBenchDatabase(adminUrl, AUDIT_DATABASE);
  await connection.close();
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const servers: Record<Variant, ServerProcess> = {} as Record<Variant, ServerProcess>;
  try {
    for (const variant of VARIANTS) {
      const port = await freePort();
      servers[variant] = new ServerProcess(
        LABEL[variant],
        'infra/local/server.ts',
        `http://127.0.0.1:${port}`,
        {
          ...options.env,
          DATABASE_URL: databaseUrl,
          PORT: String(port),
          // The access token is taken once before the runs: it must outlive them.
          ACCESS_TOKEN_TTL_SECONDS: String(Math.max(900, rounds * 2 * (warmupSeconds + seconds) + 600)),
        },
        variant === 'withoutAudit' ? ['--import', './test/bench/without-audit.ts'] : [],
      );
      options.onServer?.(servers[variant]);
    }
    await Promise.all(VARIANTS.map((variant) => servers[variant].waitHealthy()));
    // One organization per connection (a service of many firms), and the first alone (one firm's worst case).
    const tenants: Seed[] = [];
    for (let i = 0; i < connections; i += 1) {
      // Sign-ups share one limit of 10 a minute per client address (lib/http/rate-limit.ts): this
      // bench's own fresh database starts each one with none counted.
      await sql`delete from rate_limit_counters`;
      tenants.push(await seed(servers.withAudit.url, i));
    }
    const scenarios: Record<Scenario, readonly Seed[]> = { organizations: tenants, oneOrganization: [tenants[0]!] };

    const eventCount = async () => (await sql<{ n: number }[]>`select count(*)::int as n from audit_events`)[0]!.n;
    /** The count once requests cut off at the deadline have finished (stable over 300 ms). */
    const settledCount = async () => {
      let last = await eventCount();
      for (let stable = 0, tries = 0; stable < 3 && tries < 50; tries += 1) {
        await new Promise((wait) => setTimeout(wait, 100));
        const next = await eventCount();
        stable = next === last ? stable + 1 : 0;
        last = next;
      }
      return last;
    };
    const caseName = async (caseId: string) =>
      (await sql<{ name: string }[]>`select name from cases where id = ${caseId}`)[0]!.name;

    const loadBefore = loadavg()[0] ?? 0;
    const results = {} as Record<Scenario, ReturnType<typeof summarize>>;
    for (const scenario of SCENARIOS) {
      const targets = scenarios[scenario];
      const runs: AuditRun[] = [];
      for (let r = 1; r <= rounds; r += 1) {
        for (const variant of VARIANTS) {
          const server = servers[variant];
          const label = `${AUDIT_ROUTE} ${SCENARIO_LABEL[scenario]}, ${LABEL[variant]}, round ${r}`;
          console.error(`${label}: warm-up ${warmupSeconds} s, then ${seconds} s at ${connections} connections`);
          const beforeWarmUp = await settledCount();
          const warmUp = await drive(server.url, targets, warmupSeconds, connections, `${variant} ${r} warm-up`, label);
          const beforeRun = await settledCount();
          checkAuditEvents(
            variant,
            `${label} (warm-up)`,
            beforeRun - beforeWarmUp,
            warmUp.result['2xx'],
            warmUp.result.requests.sent,
          );
          const prefix = `${scenario} ${variant} ${r} run`;
          const { result, latencies } = await drive(server.url, targets, seconds, connections, prefix, label);
          const added = (await settledCount()) - beforeRun;
          checkAuditEvents(variant, label, added, result['2xx'], result.requests.sent);
          // Without events to count, the case itself shows the server without audit writes did the work.
          const name = await caseName(targets[0]!.caseId);
          if (!name.startsWith(`${prefix} `)) throw new Error(`${label}: the case is named "${name}", not by this run`);
          runs.push({
            variant,
            round: r,
            rps: round(result['2xx'] / result.duration),
            p50Ms: round(percentile(latencies, 50), 2),
            p99Ms: round(percentile(latencies, 99), 2),
            requests: result['2xx'],
            sent: result.requests.sent,
            auditEventsAdded: added,
          });
        }
      }
      results[scenario] = summarize(runs);
    }
    const loadAfter = loadavg()[0] ?? 0;
    return {
      measuredAt: new Date().toISOString(),
      route: AUDIT_ROUTE,
      event: 'case.updated',
      seconds,
      warmupSeconds,
      connections,
      rounds,
      /** The target's figures: one organization per connection. */
      organizations: results.organizations,
      /** Every connection in one organization: all writes queue on its chain head (reported, no target). */
      oneOrganization: results.oneOrganization,
      target: AUDIT_TARGET,
      passed: results.organizations.ratio.p50 <= AUDIT_TARGET.p50RatioAtMost,
      loadAverage: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
    };
  } finally {
    await sql.end({ timeout: 5 });
    // Let requests cut off at the last deadline finish before the servers close their pools under them.
    await new Promise((wait) => setTimeout(wait, 500));
    await Promise.all(Object.values(servers).map((server) => server.stop()));
  }
}

export type AuditResult = Awaited<ReturnType<typeof benchAuditCost>>;
