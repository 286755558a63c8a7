import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { custodyLimits } from '../../lib/material/custody';
import { createUser, type TestUser } from '../harness/actors';
import { useTemporaryObjectStorage } from '../harness/object-storage';
import { expectData, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { seedThread } from '../harness/material';

/**
 * Opt-in (issue 32): the custody record of a case of 1,000,000 items and 100,000 events, both
 * ways. BENCH_CUSTODY=1 DATABASE_URL=postgres://root@127.0.0.1:5432/test npx vitest run
 * test/bench/custody-scale.test.ts (BENCH_CUSTODY_ITEMS / BENCH_CUSTODY_EVENTS scale it). Prints
 * the JSON pages' latency at the start, middle and end of the items and events, and each export
 * volume's time and the process's peak RSS; the figures are in docs/decisions.md.
 */
const ITEMS = Number(process.env.BENCH_CUSTODY_ITEMS ?? 1_000_000);
const EVENTS = Number(process.env.BENCH_CUSTODY_EVENTS ?? 100_000);

useTemporaryObjectStorage('custody-bench');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await run();
  return { result, ms: performance.now() - started };
}

describe.runIf(process.env.BENCH_CUSTODY === '1')('custody at 1,000,000 items and 100,000 events', () => {
  let owner: TestUser;
  let caseId: string;

  beforeAll(async () => {
    owner = await createUser();
    caseId = expectData(
      await invoke(routes.createCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { name: 'Scale v. Custody' },
      }),
      201,
    ).id;
    const { threadId } = await seedThread(caseId, [{ minute: 0 }]);
    const seeded = await timed(async () => {
      for (let from = 1; from <= ITEMS; from += 100_000)
        await db().execute(sql`
          insert into emails (id, case_id, thread_id, grant_id, external_id, source_email, sha256, size_bytes,
                              import_source, imported_by_id, created_at, updated_at)
          select gen_random_uuid(), ${caseId}, ${threadId}, 'seed', '<seed-' || g || '@scale.example>', 'a@scale.example',
                 md5(g::text) || md5((g + 1)::text), 1000 + g, 'scale.mbox', ${owner.id},
                 timestamptz '2026-11-01T00:00:00Z' + g * interval '1 millisecond', now()
          from generate_series(${from}::int, ${Math.min(ITEMS, from + 99_999)}::int) g`);
      await db().execute(sql`
        insert into audit_events (id, organization_id, sequence, occurred_at, action, actor_type, actor_user_id,
                                  token_id, case_id, target_type, target_id, ip, user_agent, request_id, metadata,
                                  prev_hash, hash)
        select gen_random_uuid(), ${owner.organizationId}, head.sequence + g, now(), 'evidence.thread_emails.read',
               'user', ${owner.id}, ${owner.id}, ${caseId}, 'case', ${caseId}, '203.0.113.10', 'Mozilla/5.0 bench',
               'req-' || g, jsonb_build_object('path', jsonb_build_object('caseId', ${caseId}::text)),
               md5(g::text) || md5((g + 1)::text), md5((g + 2)::text) || md5((g + 3)::text)
        from generate_series(1, ${EVENTS}::int) g,
             (select sequence from audit_chain_heads where organization_id = ${owner.organizationId}) head`);
      await db().execute(
        sql`update audit_chain_heads set sequence = sequence + ${EVENTS} where organization_id = ${owner.organizationId}`,
      );
      await db().execute(sql`analyze emails`);
      await db().execute(sql`analyze audit_events`);
    });
    console.log(`seeded ${ITEMS} items and ${EVENTS} events in ${(seeded.ms / 1000).toFixed(1)} s`);
  }, 3_600_000);

  it('answers each JSON page in a few statements and milliseconds, at the start, middle and end', async () => {
    const page = (query: Record<string, string>) =>
      invoke(routes.getCaseCustody, {
        token: owner.accessToken,
        path: { caseId },
        query: { perPage: '1000', ...query },
      });
    // Cursors to the middle and the end, walked by the pages themselves from a position read by SQL.
    const positions: Record<string, Record<string, string>> = { first: {} };
    for (const [label, offset] of [
      ['middle', Math.floor(ITEMS / 2)],
      ['last', ITEMS - 500],
    ] as const) {
      const rows = (await db().execute(
        sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at, id::text from emails
            where case_id = ${caseId} order by created_at, id offset ${offset} limit 1`,
      )) as unknown as { at: string; id: string }[] | { rows: { at: string; id: string }[] };
      const [row] = Array.isArray(rows) ? rows : rows.rows;
      const itemsCursor = Buffer.from(JSON.stringify([0, row!.at, row!.id, ''])).toString('base64url');
      const eventsCursor = Buffer.from(JSON.stringify([label === 'middle' ? EVENTS / 2 : EVENTS - 500])).toString(
        'base64url',
      );
      positions[label] = { itemsCursor, eventsCursor };
    }
    for (const [label, query] of Object.entries(positions)) {
      const runs: number[] = [];
      let statements = 0;
      for (let run = 0; run < 5; run += 1) {
        const { result, ms } = await timed(() => countQueries(() => page(query)));
        const data = expectData(result.result);
        expect(data.itemCount).toBe(ITEMS + 1);
        expect(data.items.data.length).toBeGreaterThan(0);
        statements = result.queries;
        runs.push(ms);
      }
      console.log(
        `custody JSON page (${label}, 1000 items + 1000 events): median ${median(runs).toFixed(1)} ms, max ${Math.max(...runs).toFixed(1)} ms, ${statements} statements`,
      );
    }
  }, 600_000);

  it('exports the PDF in volumes of bounded memory', async () => {
    const started = expectData(
      await invoke(routes.startCustodyExport, { token: owner.accessToken, path: { caseId } }),
      202,
    );
    // The local run started by the route is the one measured: wait for it, sampling RSS.
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const { drainCustodyExports } = await import('../../lib/material/custody-exports');
    const { ms } = await timed(() => drainCustodyExports());
    clearInterval(sampler);
    const done = expectData(
      await invoke(routes.getCustodyExport, { token: owner.accessToken, path: { caseId, exportId: started.id } }),
    );
    expect(done.status).toBe('succeeded');
    expect(done.progress.itemsWritten).toBe(ITEMS + 1);
    console.log(
      `custody export: ${done.volumes.length} volumes of at most ${custodyLimits.volumeWeight} lines, ${(ms / 1000).toFixed(1)} s, peak RSS ${Math.round(peak / 1e6)} MB, ${done.volumes
        .map((volume: any) => `${(volume.sizeBytes / 1e6).toFixed(1)} MB`)
        .join(', ')}`,
    );
  }, 3_600_000);
});
