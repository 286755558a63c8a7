import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { openPostgres } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { databaseUrl } from '../harness/databases';
import { freshBenchDatabase } from './fresh-database';
import { kindCounts, prepareSeeding, type ReviewSeedContext, seedCaseFixtures } from './review-seed';
import {
  BILLING_ROW_EVERY,
  growScaleCase,
  readMeta,
  SCALE_SEED_VERSION,
  type ScaleMeta,
  writeMeta,
} from './scale-seed';
import { freePort, ServerProcess } from './server-process';
import { positiveIntEnv, type Latency, latency, round } from './samples';
import { Client, query } from './bench-client';

/**
 * The scale part of `npm run bench` (`BENCH_ONLY=scale`, not in the default run; issue 35): one
 * case grown to BENCH_SCALE_SIZES items (default 100,000, 1,000,000 and 10,000,000; the review
 * seed's kinds in their shares, see review-seed.ts, plus one billing row per 100 items), and at each
 * size the evidence reads through the local server's HTTP API (infra/local/server.ts, every
 * middleware), one request at a time, the reads interleaved round by round: p50 and p99 per read and
 * size, and the p50 growth from 1,000,000 to 10,000,000 items (target <= 2x for a paged read).
 *
 * The seeded case is kept: the database `cebs_bench_scale` holds the largest size seeded so far
 * (its size and SCALE_SEED_VERSION in the table bench_scale_meta), and before it grows past a
 * measured size it is copied to `cebs_bench_scale_<size>`, so a second run measures every size
 * without seeding. BENCH_SCALE_FRESH=1 drops them and seeds again. A size smaller than the main
 * database's with no copy is seeded from nothing in its own database.
 */

/** BENCH_SCALE_DATABASE names another (a development run at small sizes beside the kept one). */
const MAIN_DATABASE = process.env.BENCH_SCALE_DATABASE ?? 'cebs_bench_scale';
if (!/^[a-z_][a-z0-9_]*$/.test(MAIN_DATABASE))
  throw new Error(`BENCH_SCALE_DATABASE: not a plain name: ${MAIN_DATABASE}`);
const snapshotName = (items: number) => `${MAIN_DATABASE}_${items}`;
const EMAIL = 'scale-bench@example.com';
const PASSWORD = 'scale-bench-password-0123';
export const SCALE_TARGET_GROWTH = 2;

function sizesEnv(): number[] {
  const raw = process.env.BENCH_SCALE_SIZES ?? '100000,1000000,10000000';
  const sizes = raw.split(',').map((s) => Number(s.trim()));
  if (sizes.some((s) => !Number.isInteger(s) || s < 10_000))
    throw new Error(`BENCH_SCALE_SIZES: whole numbers of at least 10000, got "${raw}"`);
  return [...new Set(sizes)].sort((a, b) => a - b);
}

export interface ScaleBenchOptions {
  adminUrl: string;
  /** Environment of the server child (JWT_SECRET, LOG_LEVEL, DATA_DIR); DATABASE_URL and PORT are set here. */
  env: NodeJS.ProcessEnv;
  onServer?(server: ServerProcess): void;
}

interface ReadAtSize extends Latency {
  /** `total` of the first answer (every read here answers one). */
  total: number | null;
}

interface SizeRun {
  items: number;
  database: string;
  /** Whether this run seeded (grew) the case to this size, or found it seeded. */
  seededNow: boolean;
  databaseSize: string;
  reads: Record<string, ReadAtSize>;
  loadAverage: { before: number; after: number };
}

export interface ScaleEntry {
  name: string;
  path: string;
  paged: boolean;
  p50Ms100k: number | null;
  p50Ms1m: number | null;
  p50Ms10m: number | null;
  p99Ms10m: number | null;
  growth1mTo10m: number | null;
  totals: Record<string, number | null>;
  passed: boolean | null;
}

export interface ScaleResult {
  sizes: number[];
  seedVersion: number;
  billingRowEvery: number;
  samples: number;
  kinds: Record<string, ReturnType<typeof kindCounts>>;
  /** Seconds of each growth step (from the kept meta when found seeded): items, threads, billing rows, vacuum analyze. */
  seedSeconds: ScaleMeta['seedSeconds'];
  runs: SizeRun[];
  results: ScaleEntry[];
  failures: string[];
  targetGrowth: number;
  passed: boolean;
}

/** The reads at each size: name, path, and whether it is a paged read (the 2x target). */
function reads(ids: ScaleMeta['ids'], bigThreadId: string, typicalThreadId: string) {
  const c = ids.caseId;
  const thread = (params: Record<string, string>) =>
    `/local-emails/${c}/threads/${bigThreadId}/emails${Object.keys(params).length ? `?${query(params)}` : ''}`;
  return [
    { name: 'thread list, first page', path: `/local-emails/${c}/threads` },
    { name: 'thread emails, 10-email thread, no filter', path: `/local-emails/${c}/threads/${typicalThreadId}/emails` },
    { name: 'thread emails, 5,000-email thread, no filter', path: thread({}) },
    { name: 'thread emails, sortOrder desc', path: thread({ sortOrder: 'desc' }) },
    { name: 'thread emails, folders', path: thread({ folders: 'INBOX' }) },
    { name: 'thread emails, domains', path: thread({ domains: 'harlowreed.com' }) },
    { name: 'thread emails, excludeDomains', path: thread({ excludeDomains: 'gmail.com' }) },
    { name: 'thread emails, excludeEmails', path: thread({ excludeEmails: 'anna.lee@harlowreed.com' }) },
    { name: 'thread emails, tags', path: thread({ tags: ids.tags.responsive }) },
    { name: 'thread emails, excludeTags', path: thread({ excludeTags: ids.tags.privileged }) },
    { name: 'thread emails, untagged', path: thread({ untagged: 'true' }) },
    { name: 'thread emails, starred', path: thread({ starred: 'true' }) },
    { name: 'thread emails, unread', path: thread({ unread: 'true' }) },
    {
      name: 'thread emails, four filters (folders, domains, unread, excludeTags)',
      path: thread({ folders: 'INBOX', domains: 'harlowreed.com', unread: 'false', excludeTags: ids.tags.hot }),
    },
    {
      name: 'network search, selective word',
      path: `/professional-network/${c}/search-messages?${query({ searchText: 'kestrel' })}`,
    },
    {
      name: 'network search, common word',
      path: `/professional-network/${c}/search-messages?${query({ searchText: 'meeting' })}`,
    },
    {
      name: 'support tickets, first page',
      path: `/chat-platform/${c}/profile/${ids.chatProfiles[0]}/support-tickets`,
    },
    {
      name: 'support tickets, searchText selective',
      path: `/chat-platform/${c}/profile/${ids.chatProfiles[0]}/support-tickets?${query({ searchText: 'kestrel' })}`,
    },
    { name: 'case search, selective word', path: `/cases/${c}/search?${query({ q: 'kestrel' })}` },
    { name: 'case search, common word', path: `/cases/${c}/search?${query({ q: 'meeting' })}` },
    { name: 'billing statement, first page', path: `/cases/${c}/billing/statement` },
  ].map((r) => ({ ...r, paged: true }));
}

async function databaseExists(adminUrl: string, name: string): Promise<boolean> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    return (await admin`select 1 from pg_database where datname = ${name}`).length > 0;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

async function adminRun(adminUrl: string, statement: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** The meta of a kept database when its seed is this version, else null (also when it does not exist). */
async function keptMeta(adminUrl: string, name: string): Promise<ScaleMeta | null> {
  if (!(await databaseExists(adminUrl, name))) return null;
  const connection = await openPostgres(databaseUrl(adminUrl, name), { max: 1 });
  try {
    await migrateDatabase(connection.db, 'postgres');
  } finally {
    await connection.close();
  }
  const sql = postgres(databaseUrl(adminUrl, name), { max: 1, onnotice: () => {} });
  try {
    const meta = await readMeta(sql);
    return meta && meta.version === SCALE_SEED_VERSION ? meta : null;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function benchScale(options: ScaleBenchOptions): Promise<ScaleResult> {
  const sizes = sizesEnv();
  const samples = positiveIntEnv('BENCH_SCALE_SAMPLES', 20);
  /** Per read and size: sampling stops past this many milliseconds (at least 5 samples are kept). */
  const readBudgetMs = positiveIntEnv('BENCH_SCALE_READ_BUDGET_MS', 60_000);
  const fresh = process.env.BENCH_SCALE_FRESH === '1';
  // BENCH_SCALE_READS: only the reads whose names start with one of these (comma-separated).
  const only = (process.env.BENCH_SCALE_READS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const selected = (read: { name: string }) => only.length === 0 || only.some((prefix) => read.name.startsWith(prefix));
  const failures: string[] = [];
  const log = (line: string) => console.error(`scale: ${line} (load ${round(loadavg()[0] ?? 0, 2)})`);
  const { adminUrl } = options;

  if (fresh) {
    log(`BENCH_SCALE_FRESH=1: dropping ${MAIN_DATABASE} and its copies`);
    await adminRun(adminUrl, `drop database if exists ${MAIN_DATABASE} with (force)`);
    for (const size of sizes) await adminRun(adminUrl, `drop database if exists ${snapshotName(size)} with (force)`);
  }

  const runs: SizeRun[] = [];
  let seedSeconds: ScaleMeta['seedSeconds'] = {};
  let lastIds: ScaleMeta['ids'] | undefined;

  for (const [index, size] of sizes.entries()) {
    const later = sizes.slice(index + 1);
    // Where this size is: a copy of it, the main database at it, or the main database grown (or a fresh one).
    let database: string;
    let meta: ScaleMeta | null;
    let grow: { from: number } | null = null;
    const copy = await keptMeta(adminUrl, snapshotName(size));
    if (copy?.items === size) {
      database = snapshotName(size);
      meta = copy;
    } else {
      const main = await keptMeta(adminUrl, MAIN_DATABASE);
      if (main && main.items <= size) {
        database = MAIN_DATABASE;
        meta = main;
        if (main.items < size) grow = { from: main.items };
      } else if (main) {
        database = snapshotName(size);
        meta = null;
        grow = { from: 0 };
      } else {
        database = MAIN_DATABASE;
        meta = null;
        grow = { from: 0 };
      }
    }
    const dbUrl = databaseUrl(adminUrl, database);
    if (!meta) {
      log(`database ${database}: created for ${size.toLocaleString('en-US')} items`);
      const { connection } = await freshBenchDatabase(adminUrl, database);
      await connection.close();
    }

    const port = await freePort();
    const server = new ServerProcess(`scale-${size}`, 'infra/local/server.ts', `http://127.0.0.1:${port}`, {
      ...options.env,
      DATABASE_URL: dbUrl,
      PORT: String(port),
      // Seeding ten million items takes many minutes: the one access token must outlive it.
      ACCESS_TOKEN_TTL_SECONDS: String(6 * 3600),
    });
    options.onServer?.(server);
    const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
    let seededNow = false;
    try {
      await server.waitHealthy();
      const anonymous = new Client(server.url);
      let token: string;
      let ids: ScaleMeta['ids'];
      if (!meta) {
        const registered = await anonymous.data<{
          accessToken: string;
          organizationInfo?: { organization?: { id?: string } };
        }>('POST', '/auth/register', {
          name: 'Scale Bench',
          email: EMAIL,
          password: PASSWORD,
          acceptTerms: true,
          organizationName: 'Scale Bench Firm',
        });
        const organizationId = registered.organizationInfo?.organization?.id;
        if (!organizationId) throw new Error('scale bench: POST /auth/register answered no organization');
        token = registered.accessToken;
        const caseId = (
          await anonymous.withToken(token, organizationId).data<{ id: string }>('POST', '/cases', {
            name: 'Scale bench case',
          })
        ).id;
        const [user] = await sql<{ id: string }[]>`select id from users where email = ${EMAIL}`;
        await prepareSeeding(sql);
        const { sql: _sql, ...fixtures } = await seedCaseFixtures(sql, { organizationId, userId: user!.id, caseId });
        ids = fixtures;
        meta = { version: SCALE_SEED_VERSION, items: 0, ids, seedSeconds: {} };
        await writeMeta(sql, meta);
      } else {
        ids = meta.ids;
        token = (
          await anonymous.data<{ accessToken: string }>('POST', '/auth/login', { email: EMAIL, password: PASSWORD })
        ).accessToken;
      }
      if (grow) {
        const step = `${grow.from}->${size}`;
        log(`database ${database}: growing the case ${step} items`);
        if (grow.from > 0) await prepareSeeding(sql);
        const ctx: ReviewSeedContext = { sql, ...ids };
        const seconds = await growScaleCase(ctx, grow.from, size);
        meta = { ...meta, items: size, seedSeconds: { ...meta.seedSeconds, [step]: seconds } };
        await writeMeta(sql, meta);
        seededNow = true;
        log(
          `grown ${step} in ${seconds.items} s (threads ${seconds.threads} s, billing rows ${seconds.billingRows} s, vacuum analyze ${seconds.settle} s)`,
        );
      }
      seedSeconds = { ...seedSeconds, ...meta.seedSeconds };
      lastIds = ids;
      const api = anonymous.withToken(token, ids.organizationId);

      const [big] = await sql<{ id: string }[]>`
        select id from email_threads where case_id = ${ids.caseId} and root_message_id = '<t0@review.bench>'`;
      const [typical] = await sql<{ id: string }[]>`
        select id from email_threads where case_id = ${ids.caseId} and root_message_id = '<t1@review.bench>'`;
      // A case under 12,500 items has only the big thread (its first 5,000 emails).
      const mix = reads(ids, big!.id, (typical ?? big)!.id).filter(selected);
      const times: number[][] = mix.map(() => []);
      const spent: number[] = mix.map(() => 0);
      const totals: Array<number | null | undefined> = mix.map(() => undefined);
      const loadBefore = round(loadavg()[0] ?? 0, 2);
      log(`measuring ${mix.length} reads at ${size.toLocaleString('en-US')} items, ${samples} rounds`);
      // Two rounds of warm-up, then `samples` rounds, the reads interleaved so a change of load hits each.
      for (let r = -2; r < samples; r += 1)
        for (const [i, read] of mix.entries()) {
          if (r >= 5 && spent[i]! > readBudgetMs) continue;
          const answer = await api.send('GET', read.path);
          if (answer.status !== 200) {
            if (totals[i] === undefined)
              failures.push(`${read.name} at ${size} items: ${answer.status} ${answer.text.slice(0, 300)}`);
            totals[i] = null;
            continue;
          }
          if (totals[i] === undefined) {
            const body = JSON.parse(answer.text) as { data: { total?: number } };
            totals[i] = typeof body.data.total === 'number' ? body.data.total : null;
          }
          if (r >= 0) {
            times[i]!.push(answer.ms);
            spent[i]! += answer.ms;
          }
        }
      const [{ size: databaseSize } = { size: '?' }] = await sql<{ size: string }[]>`
        select pg_size_pretty(pg_database_size(current_database())) as size`;
      const run: SizeRun = {
        items: size,
        database,
        seededNow,
        databaseSize,
        reads: Object.fromEntries(
          mix.map((read, i) => [read.name, { ...latency(times[i]!), total: totals[i] ?? null }] as const),
        ),
        loadAverage: { before: loadBefore, after: round(loadavg()[0] ?? 0, 2) },
      };
      runs.push(run);
      for (const read of mix) {
        const m = run.reads[read.name]!;
        log(
          `  ${read.name.padEnd(58)} p50 ${String(m.p50Ms).padStart(8)} ms  p99 ${String(m.p99Ms).padStart(8)} ms  total ${m.total}`,
        );
      }
    } finally {
      await sql.end({ timeout: 5 });
      await server.stop();
    }
    // Kept for the next run before the case grows past this size.
    if (database === MAIN_DATABASE && later.length > 0 && !(await databaseExists(adminUrl, snapshotName(size)))) {
      const started = performance.now();
      await adminRun(adminUrl, `create database ${snapshotName(size)} template ${MAIN_DATABASE} strategy file_copy`);
      log(`copied ${MAIN_DATABASE} to ${snapshotName(size)} in ${round((performance.now() - started) / 1000)} s`);
    }
  }

  const at = (items: number) => runs.find((r) => r.items === items);
  const names = lastIds ? reads(lastIds, '', '').filter(selected) : [];
  const results: ScaleEntry[] = names.map((read) => {
    // A read that never answered 200 at a size (a 503 past the statement timeout) has no figure there.
    const measured = (items: number) => {
      const m = at(items)?.reads[read.name];
      return m && m.samples > 0 ? m : undefined;
    };
    const failed = runs.some((r) => r.reads[read.name]?.samples === 0);
    const p50 = (items: number) => measured(items)?.p50Ms ?? null;
    const m1 = p50(1_000_000);
    const m10 = p50(10_000_000);
    const growth = m1 !== null && m10 !== null ? round(m10 / m1, 2) : null;
    return {
      name: read.name,
      path: read.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}'),
      paged: read.paged,
      p50Ms100k: p50(100_000),
      p50Ms1m: m1,
      p50Ms10m: m10,
      p99Ms10m: measured(10_000_000)?.p99Ms ?? null,
      growth1mTo10m: growth,
      totals: Object.fromEntries(runs.map((r) => [String(r.items), r.reads[read.name]?.total ?? null])),
      passed: failed ? false : growth === null ? null : growth <= SCALE_TARGET_GROWTH,
    };
  });
  return {
    sizes,
    seedVersion: SCALE_SEED_VERSION,
    billingRowEvery: BILLING_ROW_EVERY,
    samples,
    kinds: Object.fromEntries(sizes.map((s) => [String(s), kindCounts(s)])),
    seedSeconds,
    runs,
    results,
    failures,
    targetGrowth: SCALE_TARGET_GROWTH,
    passed: failures.length === 0 && results.every((r) => r.passed !== false),
  };
}

/** The part's lines for stdout: p50 per size, p99 at the largest, growth from 1M to 10M. */
export function scaleReport(r: ScaleResult, machine: { node: string; postgres: string; cpu: string }): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const cell = (v: number | null, w = 9) => (v === null ? '-' : String(v)).padStart(w);
  const lines = [
    `\nScale curve (issue 35): one case at ${r.sizes.map(n).join(', ')} items, through the local server's HTTP API, one request at a time, ${r.samples} rounds`,
    `  seed (s): ${Object.entries(r.seedSeconds)
      .map(
        ([step, s]) => `${step} items ${s.items}, threads ${s.threads}, billing ${s.billingRows}, vacuum ${s.settle}`,
      )
      .join('; ')}`,
    `  ${'read'.padEnd(64)}${'p50 100k'.padStart(9)}${'p50 1M'.padStart(9)}${'p50 10M'.padStart(9)}${'p99 10M'.padStart(9)}${'growth'.padStart(9)}`,
  ];
  for (const e of r.results)
    lines.push(
      `  ${e.name.padEnd(64)}${cell(e.p50Ms100k)}${cell(e.p50Ms1m)}${cell(e.p50Ms10m)}${cell(e.p99Ms10m)}${cell(e.growth1mTo10m)}${e.passed === false ? (e.growth1mTo10m === null ? '  FAILED' : '  MISSED') : ''}`,
    );
  for (const run of r.runs)
    lines.push(
      `  ${n(run.items)} items: database ${run.database} (${run.databaseSize}${run.seededNow ? ', seeded in this run' : ', found seeded'}), load average ${run.loadAverage.before} before, ${run.loadAverage.after} after`,
    );
  for (const failure of r.failures) lines.push(`  FAILED: ${failure}`);
  lines.push(
    `  Node ${machine.node}, PostgreSQL ${machine.postgres}, ${machine.cpu}`,
    r.passed
      ? `  growth <= ${r.targetGrowth}x for every read`
      : `  TARGET MISSED (growth > ${r.targetGrowth}x) or requests failed (above)`,
  );
  return lines.join('\n');
}
