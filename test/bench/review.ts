import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { freshBenchDatabase } from './fresh-database';
import {
  BIG_THREAD,
  growCase,
  kindCounts,
  prepareSeeding,
  type ReviewSeedContext,
  seedCaseFixtures,
  seedEmails,
  settle,
} from './review-seed';
import { freePort, ServerProcess } from './server-process';
import { positiveIntEnv, type Latency, latency, round } from './samples';
import { type Answer, Client, query } from './bench-client';

/**
 * The review part of `npm run bench` (`BENCH_ONLY=review`, not in the default run): issue 34's
 * speed lines, through the HTTP API of the local server (infra/local/server.ts, every middleware)
 * on a fresh Postgres database `cebs_bench_review`, seeded by SQL (review-seed.ts):
 *
 * - the case search (`GET /cases/{caseId}/search`), a mix of queries, p50 and p99 with the case at
 *   BENCH_REVIEW_ITEMS / 10 items and again once grown to BENCH_REVIEW_ITEMS (default 1,000,000)
 *   across the four kinds, and the growth of p50 between them;
 * - tagging 1,000 emails in one `POST /cases/{caseId}/tagging`, adds and removes alternating, so
 *   each request changes 1,000 links;
 * - thread emails filtered by a manual tag (`GET /local-emails/{caseId}/threads/{threadId}/emails?tags=`)
 *   at the case's emails of the 1,000,000-item case and again with the case's emails topped up to
 *   BENCH_REVIEW_EMAILS (default 1,000,000);
 * - a tagging job by filter (`{ add, filter: { kind: 'email' } }`) over a second case of
 *   BENCH_REVIEW_FILTER_EMAILS (default 100,000) emails, polled until it ends.
 *
 * A route the server does not have (404 ROUTE_NOT_FOUND or 405) is skipped with a line saying so.
 * Requests are sent one at a time (latency, not throughput). A missed target or a failed request
 * sets `passed: false` (the runner exits 1 after keeping the figures).
 */

const REVIEW_DATABASE = 'cebs_bench_review';
const PASSWORD = 'review-bench-password-0123';

export const REVIEW_TARGETS = {
  searchP50Ms: 50,
  searchP99Ms: 150,
  searchP50Growth: 2,
  taggingP50Ms: 300,
  filterJobSeconds: 20,
  threadEmailsP50Ms: 40,
} as const;

export interface ReviewBenchOptions {
  adminUrl: string;
  /** Environment of the server child (JWT_SECRET, LOG_LEVEL, DATA_DIR); DATABASE_URL and PORT are set here. */
  env: NodeJS.ProcessEnv;
  /** Told the server process as soon as it starts, so the runner can stop it on SIGINT. */
  onServer?(server: ServerProcess): void;
}

interface SearchQueryResult extends Latency {
  name: string;
  query: Record<string, string>;
  /** `total` of the first answer, and whether it carried `facets`. */
  total: number | null;
  facets: boolean;
}

interface SearchRun extends Latency {
  items: number;
  queries: SearchQueryResult[];
}

export interface ReviewResult {
  sizes: {
    items: number;
    smallItems: number;
    kinds: ReturnType<typeof kindCounts>;
    threadEmails: number;
    filterJobEmails: number;
    bigThreadEmails: number;
  };
  seed: Record<string, number>;
  search: { skipped: string } | { small: SearchRun; large: SearchRun; p50Growth: number; passed: boolean };
  tagging:
    | { skipped: string }
    | (Latency & { itemsPerRequest: number; add: Latency; remove: Latency; passed: boolean });
  /** The big thread (5,000 emails; the target) and a typical one (10), at each email count of the case. */
  threadEmailsByTag: Array<
    Latency & { emails: number; thread: 'big' | 'typical'; threadEmails: number; total: number | null }
  >;
  threadEmailsPassed: boolean;
  filterJob:
    | { skipped: string }
    | {
        emails: number;
        status: string;
        seconds: number;
        jobSeconds: number | null;
        totalItems: number | null;
        addedLinks: number | null;
        error: string | null;
        passed: boolean;
      };
  failures: string[];
  targets: typeof REVIEW_TARGETS;
  loadAverage: { before: number; after: number; duringMax: number };
  passed: boolean;
}

/** A route this server does not have: the local server's ROUTE_NOT_FOUND, or 405 for the method. */
const ok = (answer: Answer) => answer.status >= 200 && answer.status <= 299;
const missingRoute = (answer: Answer) =>
  answer.status === 405 || (answer.status === 404 && answer.text.includes('ROUTE_NOT_FOUND'));

/** The search mix: selective and common words, a phrase, a prefix, an exclusion, kinds and tags filters. */
const searchQueries = (tags: ReviewSeedContext['tags']): Array<{ name: string; query: Record<string, string> }> => [
  { name: 'selective word (0.1% of items)', query: { q: 'kestrel' } },
  { name: 'two common words', query: { q: 'settlement agreement' } },
  { name: 'phrase', query: { q: '"breach of contract"' } },
  { name: 'prefix', query: { q: 'depos*' } },
  { name: 'word, excluded word', query: { q: 'invoice -draft' } },
  { name: 'word, kinds email and support-ticket', query: { q: 'refund', kinds: 'email,support-ticket' } },
  { name: 'word, tag Responsive (10% of items)', query: { q: 'contract', tags: tags.responsive } },
  { name: 'common word by date', query: { q: 'meeting', sortBy: 'date', sortOrder: 'desc' } },
];

export async function benchReview(options: ReviewBenchOptions): Promise<ReviewResult> {
  const items = positiveIntEnv('BENCH_REVIEW_ITEMS', 1_000_000);
  const smallItems = Math.max(1, Math.round(items / 10));
  const threadEmails = positiveIntEnv('BENCH_REVIEW_EMAILS', items);
  const filterJobEmails = positiveIntEnv('BENCH_REVIEW_FILTER_EMAILS', 100_000);
  const samples = positiveIntEnv('BENCH_REVIEW_SAMPLES', 25);
  const taggingRequests = positiveIntEnv('BENCH_REVIEW_TAGGING_REQUESTS', 40);
  const kinds = kindCounts(items);
  const failures: string[] = [];
  const loads: number[] = [];
  const load = () => {
    const value = round(loadavg()[0] ?? 0, 2);
    loads.push(value);
    return value;
  };
  const loadBefore = load();
  const log = (line: string) => console.error(`review: ${line} (load ${load()})`);

  const { url: databaseUrl, connection } = await freshBenchDatabase(options.adminUrl, REVIEW_DATABASE);
  await connection.close();
  log(`database ${databaseUrl} (dropped and recreated)`);
  const port = await freePort();
  const server = new ServerProcess('review', 'infra/local/server.ts', `http://127.0.0.1:${port}`, {
    ...options.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    // Seeding a million items takes minutes: the one access token must outlive the part.
    ACCESS_TOKEN_TTL_SECONDS: String(6 * 3600),
  });
  options.onServer?.(server);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await server.waitHealthy();
    const anonymous = new Client(server.url);
    const registered = await anonymous.data<{
      accessToken: string;
      organizationInfo?: { organization?: { id?: string } };
    }>('POST', '/auth/register', {
      name: 'Review Bench',
      email: 'review-bench@example.com',
      password: PASSWORD,
      acceptTerms: true,
      organizationName: 'Review Bench Firm',
    });
    const organizationId = registered.organizationInfo?.organization?.id;
    if (!organizationId) throw new Error('review bench: POST /auth/register answered no organization');
    const api = anonymous.withToken(registered.accessToken, organizationId);
    const caseId = (await api.data<{ id: string }>('POST', '/cases', { name: 'Review bench case' })).id;
    const [user] = await sql<{ id: string }[]>`select id from users where email = 'review-bench@example.com'`;

    // Which of the new routes this server has (they are built beside this bench).
    const searchProbe = await api.send('GET', `/cases/${caseId}/search?q=probe`);
    const taggingProbe = await api.send('POST', `/cases/${caseId}/tagging`, {});
    const skipped = (route: string, answer: Answer) =>
      missingRoute(answer) ? `${route} answered ${answer.status}: the route is not on this server, skipped` : undefined;
    const searchMissing = skipped('GET /cases/{caseId}/search', searchProbe);
    const taggingMissing = skipped('POST /cases/{caseId}/tagging', taggingProbe);
    for (const line of [searchMissing, taggingMissing]) if (line) log(line);

    await prepareSeeding(sql);
    const ctx = await seedCaseFixtures(sql, { organizationId, userId: user!.id, caseId });
    const seed: Record<string, number> = {};
    const seconds = (ms: number) => round(ms / 1000, 1);

    log(`seeding ${smallItems.toLocaleString('en-US')} items`);
    const perKind = (ms: Record<string, number>) => Object.values(ms).reduce((sum, value) => sum + value, 0);
    const smallSeed = await growCase(ctx, 0, smallItems);
    seed.smallItemsSeconds = seconds(perKind(smallSeed));
    seed.smallSettleSeconds = seconds(await settle(sql));
    log(`seeded in ${seed.smallItemsSeconds} s, vacuum analyze ${seed.smallSettleSeconds} s`);

    const searchAt = async (size: number): Promise<SearchRun> => {
      const mix = searchQueries(ctx.tags);
      const times: number[][] = mix.map(() => []);
      const first: Array<Answer | undefined> = mix.map(() => undefined);
      // Two rounds of warm-up, then `samples` rounds, the queries interleaved so a change of load hits each.
      for (let round = -2; round < samples; round += 1)
        for (const [i, entry] of mix.entries()) {
          const answer = await api.send('GET', `/cases/${caseId}/search?${query(entry.query)}`);
          if (answer.status !== 200) {
            if (!first[i])
              failures.push(`search "${entry.name}" at ${size} items: ${answer.status} ${answer.text.slice(0, 300)}`);
            first[i] ??= answer;
            continue;
          }
          first[i] ??= answer;
          if (round >= 0) times[i]!.push(answer.ms);
        }
      const queries = mix.map((entry, i): SearchQueryResult => {
        const answer = first[i]!;
        const data =
          answer.status === 200 ? (JSON.parse(answer.text) as { data: { total?: number; facets?: unknown } }).data : {};
        return { ...entry, ...latency(times[i]!), total: data.total ?? null, facets: data.facets !== undefined };
      });
      return { items: size, ...latency(times.flat()), queries };
    };

    let search: ReviewResult['search'] = { skipped: searchMissing ?? '' };
    const small = searchMissing ? undefined : await searchAt(smallItems);
    if (small) log(`search at ${smallItems} items: p50 ${small.p50Ms} ms, p99 ${small.p99Ms} ms`);

    log(`growing the case to ${items.toLocaleString('en-US')} items`);
    const grown = await growCase(ctx, smallItems, items);
    seed.growSeconds = seconds(perKind(grown));
    for (const [kind, ms] of Object.entries(grown))
      seed[`grow${kind[0]!.toUpperCase()}${kind.slice(1)}Seconds`] = seconds(ms);
    seed.growSettleSeconds = seconds(await settle(sql));
    log(`grown in ${seed.growSeconds} s, vacuum analyze ${seed.growSettleSeconds} s`);
    if (small) {
      const large = await searchAt(items);
      log(`search at ${items} items: p50 ${large.p50Ms} ms, p99 ${large.p99Ms} ms`);
      const p50Growth = round(large.p50Ms / small.p50Ms, 2);
      search = {
        small,
        large,
        p50Growth,
        passed:
          large.p50Ms <= REVIEW_TARGETS.searchP50Ms &&
          large.p99Ms <= REVIEW_TARGETS.searchP99Ms &&
          p50Growth <= REVIEW_TARGETS.searchP50Growth &&
          large.queries.every((q) => q.samples === samples),
      };
    }

    // 1,000 emails per request, five sets taken in turn: add to a set, remove from it, next set.
    let tagging: ReviewResult['tagging'] = { skipped: taggingMissing ?? '' };
    if (!taggingMissing) {
      const emailIds = (
        await sql<{ id: string }[]>`select id from emails where case_id = ${caseId} order by id limit 5000`
      ).map((r) => r.id);
      const sets = [0, 1, 2, 3, 4].map((s) => emailIds.slice(s * 1000, s * 1000 + 1000));
      const adds: number[] = [];
      const removes: number[] = [];
      // The first add and remove are warm-up.
      for (let r = -2; r < taggingRequests; r += 1) {
        const adding = (r + 2) % 2 === 0;
        const set = sets[Math.floor((r + 2) / 2) % sets.length]!;
        const body = {
          ...(adding ? { add: [ctx.tags.tagging] } : { remove: [ctx.tags.tagging] }),
          items: set.map((id) => ({ kind: 'email', id })),
        };
        const answer = await api.send('POST', `/cases/${caseId}/tagging`, body);
        const data = ok(answer) ? (JSON.parse(answer.text) as { data: { added?: number; removed?: number } }).data : {};
        const changed = adding ? data.added : data.removed;
        if (!ok(answer) || changed !== set.length) {
          failures.push(
            `tagging request ${r} (${adding ? 'add' : 'remove'} ${set.length} emails): ${answer.status} ${answer.text.slice(0, 300)}`,
          );
          break;
        }
        if (r >= 0) (adding ? adds : removes).push(answer.ms);
      }
      const all = latency([...adds, ...removes]);
      tagging = {
        ...all,
        itemsPerRequest: 1000,
        add: latency(adds),
        remove: latency(removes),
        passed: adds.length + removes.length === taggingRequests && all.p50Ms <= REVIEW_TARGETS.taggingP50Ms,
      };
      log(`tagging 1,000 emails: p50 ${all.p50Ms} ms`);
    }

    // Thread emails by the Responsive tag (10% of emails): the big thread (about 500 of its 5,000
    // tagged; the target is judged on it) and a typical thread of 10 with a tagged email.
    const [bigThread] = await sql<{ id: string }[]>`
      select id from email_threads where case_id = ${caseId} and root_message_id = '<t0@review.bench>'`;
    const [typicalThread] = await sql<{ id: string; count: number }[]>`
      select t.id, (select count(*)::int from emails where thread_id = t.id) as count
      from email_threads t join emails e on e.thread_id = t.id
      join email_tags l on l.email_id = e.id and l.tag_id = ${ctx.tags.responsive} and l.removed_at is null
      where t.case_id = ${caseId} and t.root_message_id <> '<t0@review.bench>' order by e.external_id limit 1`;
    const threads = [
      { thread: 'big' as const, id: bigThread!.id, size: Math.min(BIG_THREAD, kinds.emails) },
      ...(typicalThread ? [{ thread: 'typical' as const, id: typicalThread.id, size: typicalThread.count }] : []),
    ];
    const threadEmailsByTag: ReviewResult['threadEmailsByTag'] = [];
    const threadEmailsAt = async (emails: number) => {
      for (const thread of threads) {
        const path = `/local-emails/${caseId}/threads/${thread.id}/emails?${query({ tags: ctx.tags.responsive })}`;
        const times: number[] = [];
        let total: number | null = null;
        for (let i = -10; i < samples * 4; i += 1) {
          const answer = await api.send('GET', path);
          if (answer.status !== 200) {
            failures.push(`thread emails at ${emails} emails: ${answer.status} ${answer.text.slice(0, 300)}`);
            return;
          }
          total ??= (JSON.parse(answer.text) as { data: { total: number } }).data.total;
          if (i >= 0) times.push(answer.ms);
        }
        const measured = { emails, thread: thread.thread, threadEmails: thread.size, total, ...latency(times) };
        threadEmailsByTag.push(measured);
        log(`thread emails by tag, ${thread.size}-email thread, ${emails} emails: p50 ${measured.p50Ms} ms`);
      }
    };
    await threadEmailsAt(kinds.emails);
    if (threadEmails > kinds.emails) {
      log(`topping the case's emails up to ${threadEmails.toLocaleString('en-US')}`);
      const started = performance.now();
      await seedEmails(ctx, kinds.emails, threadEmails);
      seed.emailsTopUpSeconds = seconds(performance.now() - started);
      seed.emailsTopUpSettleSeconds = seconds(await settle(sql));
      await threadEmailsAt(threadEmails);
    }
    const atTarget = threadEmailsByTag.findLast((m) => m.thread === 'big');
    const threadEmailsPassed =
      atTarget !== undefined &&
      atTarget.emails === Math.max(threadEmails, kinds.emails) &&
      atTarget.p50Ms <= REVIEW_TARGETS.threadEmailsP50Ms;

    let filterJob: ReviewResult['filterJob'] = { skipped: taggingMissing ?? '' };
    if (!taggingMissing) {
      const filterCaseId = (await api.data<{ id: string }>('POST', '/cases', { name: 'Review bench filter case' })).id;
      const started = performance.now();
      await seedEmails(ctx, 0, filterJobEmails, { caseId: filterCaseId, links: false });
      seed.filterCaseSeconds = seconds(performance.now() - started);
      await sql`vacuum (analyze) emails`;
      // The job's tag: a case tag of the filter case (one of another case names nothing there), by SQL like the others.
      const [jobTag] = await sql<{ id: string }[]>`
        insert into tags (id, organization_id, case_id, name, name_lowercase, type, severity, origin, creator_access_type, created_by_id, is_active, created_at, updated_at)
        values (gen_random_uuid(), ${organizationId}, ${filterCaseId}, 'Bench filter job', 'bench filter job', 'case', 'info', 'manual', 'org', ${user!.id}, true, now(), now())
        returning id`;
      log(`filter job over ${filterJobEmails.toLocaleString('en-US')} emails`);
      filterJob = await runFilterJob(api, filterCaseId, jobTag!.id, filterJobEmails, failures);
      log(`filter job ${filterJob.status} in ${filterJob.seconds} s`);
    }

    const loadAfter = load();
    const searchPassed = 'skipped' in search || search.passed;
    const taggingPassed = 'skipped' in tagging || tagging.passed;
    const filterJobPassed = 'skipped' in filterJob || filterJob.passed;
    return {
      sizes: {
        items,
        smallItems,
        kinds,
        threadEmails: Math.max(threadEmails, kinds.emails),
        filterJobEmails,
        bigThreadEmails: Math.min(BIG_THREAD, kinds.emails),
      },
      seed,
      search,
      tagging,
      threadEmailsByTag,
      threadEmailsPassed,
      filterJob,
      failures,
      targets: REVIEW_TARGETS,
      loadAverage: { before: loadBefore, after: loadAfter, duringMax: Math.max(...loads) },
      passed: failures.length === 0 && searchPassed && taggingPassed && filterJobPassed && threadEmailsPassed,
    };
  } finally {
    await sql.end({ timeout: 5 });
    await server.stop();
  }
}

interface TaggingJob {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  totalItems: number | null;
  processedItems: number;
  addedLinks: number;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** Starts the job and reads it back every 100 ms until it ends (at most 10 minutes). */
async function runFilterJob(
  api: Client,
  caseId: string,
  tagId: string,
  emails: number,
  failures: string[],
): Promise<Extract<ReviewResult['filterJob'], { status: string }>> {
  const started = performance.now();
  const answer = await api.send('POST', `/cases/${caseId}/tagging`, { add: [tagId], filter: { kind: 'email' } });
  const failed = (status: string, error: string) => {
    failures.push(`filter job: ${error}`);
    const elapsed = round((performance.now() - started) / 1000, 2);
    return {
      emails,
      status,
      seconds: elapsed,
      jobSeconds: null,
      totalItems: null,
      addedLinks: null,
      error,
      passed: false,
    };
  };
  if (!ok(answer)) return failed(`answered ${answer.status}`, `${answer.status} ${answer.text.slice(0, 300)}`);
  let job = (JSON.parse(answer.text) as { data: TaggingJob }).data;
  while (job.status === 'queued' || job.status === 'running') {
    if (performance.now() - started > 600_000) return failed(job.status, 'not ended after 10 minutes');
    await new Promise((wait) => setTimeout(wait, 100));
    const read = await api.send('GET', `/cases/${caseId}/tagging/${job.id}`);
    if (read.status !== 200) return failed(`read ${read.status}`, `GET job ${read.status} ${read.text.slice(0, 300)}`);
    job = (JSON.parse(read.text) as { data: TaggingJob }).data;
  }
  const seconds = round((performance.now() - started) / 1000, 2);
  const jobSeconds =
    job.startedAt && job.finishedAt ? round((Date.parse(job.finishedAt) - Date.parse(job.startedAt)) / 1000, 2) : null;
  if (job.status !== 'succeeded') failures.push(`filter job ended ${job.status}: ${job.error ?? ''}`);
  else if (job.addedLinks !== emails) failures.push(`filter job added ${job.addedLinks} links for ${emails} emails`);
  return {
    emails,
    status: job.status,
    seconds,
    jobSeconds,
    totalItems: job.totalItems,
    addedLinks: job.addedLinks,
    error: job.error,
    passed: job.status === 'succeeded' && job.addedLinks === emails && seconds <= REVIEW_TARGETS.filterJobSeconds,
  };
}

/** The part's lines for stdout: each figure with its target. */
export function reviewReport(r: ReviewResult, machine: { node: string; postgres: string; cpu: string }): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const t = r.targets;
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const k = r.sizes.kinds;
  const lines = [
    `\nReview (issue 34): through the local server's HTTP API, one request at a time; case of ${n(r.sizes.items)} items`,
    `  (${n(k.emails)} emails, ${n(k.networkMessages)} network messages, ${n(k.supportTickets)} support tickets, ${n(k.deviceNotes)} device notes)`,
    `  seeding by SQL: ${n(r.sizes.smallItems)} items ${r.seed.smallItemsSeconds} s (+ vacuum analyze ${r.seed.smallSettleSeconds} s), grown to ${n(r.sizes.items)} in ${r.seed.growSeconds} s (+ ${r.seed.growSettleSeconds} s)` +
      (r.seed.emailsTopUpSeconds === undefined
        ? ''
        : `, emails topped up to ${n(r.sizes.threadEmails)} in ${r.seed.emailsTopUpSeconds} s (+ ${r.seed.emailsTopUpSettleSeconds} s)`) +
      (r.seed.filterCaseSeconds === undefined
        ? ''
        : `, filter-job case of ${n(r.sizes.filterJobEmails)} emails ${r.seed.filterCaseSeconds} s`),
  ];
  if ('skipped' in r.search) lines.push(`  search: SKIPPED, ${r.search.skipped}`);
  else {
    const s = r.search;
    lines.push(
      `  GET /cases/{caseId}/search, ${s.large.queries.length} queries x ${s.large.queries[0]?.samples ?? 0} samples at each size; p50 at ${n(s.small.items)} -> at ${n(s.large.items)} items, p99 at ${n(s.large.items)}, total at each:`,
    );
    for (const [i, q] of s.large.queries.entries()) {
      const small = s.small.queries[i]!;
      lines.push(
        `    ${q.name.padEnd(40)} ${JSON.stringify(q.query)
          .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<tag>')
          .padEnd(
            52,
          )} p50 ${String(small.p50Ms).padStart(7)} -> ${String(q.p50Ms).padStart(7)} ms   p99 ${String(q.p99Ms).padStart(7)} ms   total ${small.total ?? '-'} -> ${q.total ?? '-'}${q.facets ? '' : '   (no facets in the answer)'}`,
      );
    }
    lines.push(
      `    mix at ${n(s.small.items)} items: p50 ${s.small.p50Ms} ms, p99 ${s.small.p99Ms} ms`,
      `    mix at ${n(s.large.items)} items: p50 ${s.large.p50Ms} ms (target <= ${t.searchP50Ms}), p99 ${s.large.p99Ms} ms (target <= ${t.searchP99Ms}); p50 growth ${s.p50Growth}x (target <= ${t.searchP50Growth}x): ${verdict(s.passed)}`,
    );
  }
  if ('skipped' in r.tagging) lines.push(`  tagging 1,000 items: SKIPPED, ${r.tagging.skipped}`);
  else
    lines.push(
      `  POST /cases/{caseId}/tagging, 1,000 emails a request, ${r.tagging.samples} requests: p50 ${r.tagging.p50Ms} ms (add ${r.tagging.add.p50Ms}, remove ${r.tagging.remove.p50Ms}), p99 ${r.tagging.p99Ms} ms; target p50 <= ${t.taggingP50Ms} ms: ${verdict(r.tagging.passed)}`,
    );
  for (const m of r.threadEmailsByTag)
    lines.push(
      `  thread emails ?tags=<manual tag>, ${n(m.threadEmails)}-email thread (${m.total ?? '-'} tagged), ${n(m.emails)} emails in the case: p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms`,
    );
  lines.push(
    `    target p50 <= ${t.threadEmailsP50Ms} ms at ${n(r.sizes.threadEmails)} emails (the ${n(r.sizes.bigThreadEmails)}-email thread): ${verdict(r.threadEmailsPassed)}`,
  );
  if ('skipped' in r.filterJob) lines.push(`  filter job: SKIPPED, ${r.filterJob.skipped}`);
  else {
    const j = r.filterJob;
    lines.push(
      `  filter job { kind: 'email' } over ${n(j.emails)} emails: ${j.status} in ${j.seconds} s from the POST (job ${j.jobSeconds ?? '-'} s from start to finish), ${j.addedLinks ?? '-'} links added; target <= ${t.filterJobSeconds} s: ${verdict(j.passed)}`,
    );
  }
  for (const failure of r.failures) lines.push(`  FAILED: ${failure}`);
  lines.push(
    `  load average ${r.loadAverage.before} before, ${r.loadAverage.after} after, ${r.loadAverage.duringMax} max; Node ${machine.node}, PostgreSQL ${machine.postgres}, ${machine.cpu}`,
    r.passed ? '  targets met' : '  TARGETS MISSED or requests failed (above)',
  );
  return lines.join('\n');
}
