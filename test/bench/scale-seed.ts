import { performance } from 'node:perf_hooks';
import type postgres from 'postgres';
import { type BenchTag, growCase, threadKey, kindCounts, type ReviewSeedContext, settle } from './review-seed';

/**
 * What the scale part (scale.ts) adds to the review seed (review-seed.ts) and how it keeps a
 * seeded case between runs: the ids of the case and its fixtures, and the number of items seeded,
 * in `bench_scale_meta` of the bench database, with SCALE_SEED_VERSION (raise it when the seed
 * changes, so an older database is seeded again rather than measured).
 *
 * Two things the review seed leaves out are filled in here, both functions of the item number as
 * the rest: each thread's `last_message_at` and `message_count` (the importer keeps them; the
 * thread list sorts on them), and the case's billing rows, one per BILLING_ROW_EVERY items.
 */

export const SCALE_SEED_VERSION = 1;
/** One billing row of the case per this many items: 1,000 rows at 100,000 items, 100,000 at 10,000,000. */
export const BILLING_ROW_EVERY = 100;

/** The ids a seeded case needs (everything of ReviewSeedContext but the connection). */
export type ScaleIds = Omit<ReviewSeedContext, 'sql'>;

export interface ScaleMeta {
  version: number;
  items: number;
  ids: ScaleIds;
  /** Seconds of each growth step, keyed `from->to`: items, threads, billing rows, vacuum analyze. */
  seedSeconds: Record<string, { items: number; threads: number; billingRows: number; settle: number }>;
}

export async function readMeta(sql: postgres.Sql): Promise<ScaleMeta | null> {
  const [exists] = await sql<{ t: string | null }[]>`select to_regclass('bench_scale_meta')::text as t`;
  if (!exists?.t) return null;
  const [row] = await sql<{ value: ScaleMeta }[]>`select value from bench_scale_meta where key = 'seed'`;
  return row?.value ?? null;
}

export async function writeMeta(sql: postgres.Sql, meta: ScaleMeta): Promise<void> {
  await sql`create table if not exists bench_scale_meta (key text primary key, value jsonb not null)`;
  await sql`insert into bench_scale_meta (key, value) values ('seed', ${sql.json(meta as never)})
            on conflict (key) do update set value = excluded.value`;
}

/**
 * Each thread's latest message time and message count, from its emails, for the threads the
 * growth from `from` to `to` items touched (the last thread of a smaller case may gain emails).
 */
async function fillThreads(ctx: ReviewSeedContext, from: number, to: number): Promise<void> {
  const a = kindCounts(from).emails;
  const b = kindCounts(to).emails;
  if (b <= a) return;
  const roots = ctx.sql`select '<t' || k || '@review.bench>' from generate_series(${threadKey(a)}::int, ${threadKey(b - 1)}::int) k`;
  await ctx.sql`
    update email_threads t set last_message_at = s.last, message_count = s.count
    from (
      select e.thread_id, max(e.date) as last, count(*)::int as count
      from email_threads x join emails e on e.thread_id = x.id
      where x.case_id = ${ctx.caseId} and x.root_message_id in (${roots})
      group by e.thread_id
    ) s
    where t.id = s.thread_id`;
}

/**
 * The case's billing rows n in [from / EVERY, to / EVERY): statuses in fixed shares (paid 60%,
 * invoiced 10%, plan-included and informational 20%, waived 5%, failed 5%, by n % 20), dates over three
 * years by a hash of n, so the statement's page is the newest and its totals cover every row.
 */
async function seedBillingRows(ctx: ReviewSeedContext, from: number, to: number): Promise<void> {
  const a = Math.floor(from / BILLING_ROW_EVERY);
  const b = Math.floor(to / BILLING_ROW_EVERY);
  if (b <= a) return;
  await ctx.sql.unsafe(
    `insert into billing_rows (id, organization_id, case_id, sku_key, description, quantity, unit_amount_cents, amount_cents,
                               status, informational, idempotency_key, charge_key, created_by_id, created_at, updated_at)
     select gen_random_uuid(), $1, $2, 'evidence_ingest', 'Evidence processing, batch ' || n, 1 + n % 7, 125,
            125 * (1 + n % 7),
            (array['paid','paid','paid','paid','paid','paid','INVOICED','plan_included','plan_included','waived',
                   'paid','paid','paid','paid','paid','paid','INVOICED','plan_included','plan_included','failed'])[1 + n % 20],
            n % 10 in (7, 8), 'scale-bench-' || n, 'scale-bench-' || n, $3,
            timestamptz '2023-01-01 00:00:00+00' + make_interval(secs => pg_temp.h(n, 81, 94608000)), now()
     from generate_series($4::int, $5::int - 1) n`,
    [ctx.organizationId, ctx.caseId, ctx.userId, a, b],
  );
}

/** Grows the case from `from` to `to` items with everything the scale part reads, then VACUUM (ANALYZE). */
export async function growScaleCase(ctx: ReviewSeedContext, from: number, to: number) {
  const seconds = (ms: number) => Number((ms / 1000).toFixed(1));
  const timed = async (run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    return seconds(performance.now() - started);
  };
  const items = await timed(() => growCase(ctx, from, to));
  const threads = await timed(() => fillThreads(ctx, from, to));
  const billingRows = await timed(() => seedBillingRows(ctx, from, to));
  const settled = await timed(async () => {
    await settle(ctx.sql);
    await ctx.sql`vacuum (analyze) billing_rows`;
    await ctx.sql`vacuum (analyze) network_message_lexemes`;
  });
  return { items, threads, billingRows, settle: settled };
}

export type { BenchTag };
