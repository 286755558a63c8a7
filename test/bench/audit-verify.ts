import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { eq } from 'drizzle-orm';
import postgres from 'postgres';
import {
  continueFullVerifications,
  GENESIS_HASH,
  recordAudit,
  verifyAuditChain,
  verifyAuditTrail,
} from '../../lib/audit';
import { canonicalTemplate } from '../../lib/audit/chain';
import { INCREMENTAL_LIMIT } from '../../lib/audit/verify';
import { closeDb, db, useConnection } from '../../lib/db/client';
import { auditVerificationCheckpoints } from '../../lib/db/schema';
import { transaction } from '../../lib/db/transaction';
import { freshBenchDatabase } from './fresh-database';

/** Issue 32: a verify call answers within this at 1,000,000 events. */
export const AUDIT_VERIFY_TARGET = { events: 1_000_000, incrementalMs: 1_000 } as const;
/** Events appended before each timed incremental call. */
const APPENDED = 100;
const SAMPLES = 10;
/** Stands for each event's id in the seeding template; replaced by a fresh UUID per event. */
const ID_MARK = '00000000-0000-4000-8000-00000000abcd';

export interface AuditVerifyResult {
  events: number;
  seedSeconds: number;
  /** The route as it was: the whole chain re-hashed in one call (still the CLI's `audit verify`). */
  wholeChainMs: number;
  /** The first verify call with no checkpoint yet: it checks INCREMENTAL_LIMIT events and stops. */
  firstCallMs: number;
  firstCallEvents: number;
  /** A verify call after APPENDED new events, the checkpoint at the head before them. */
  incremental: { appended: number; samples: number; p50Ms: number; maxMs: number };
  /** The background full re-verification: maintenance runs until it records its result. */
  full: { runs: number; totalMs: number; maxRunMs: number; eventsPerRun: number; valid: boolean | null };
  target: typeof AUDIT_VERIFY_TARGET;
  passed: boolean;
}

/**
 * Seeds one organization with 1,000,000 chained events in PostgreSQL itself (a plpgsql loop
 * hashing the same RFC 8785 text the service hashes: canonicalTemplate of one event, its id, sequence
 * and previous hash put in per event, as audit_append does), then times, in-process on lib/audit:
 * the whole chain in one call (the route before issue 32), the first verify call with no
 * checkpoint, verify calls after APPENDED new events each, and the maintenance runs of the full
 * re-verification until it records its result.
 */
export async function benchAuditVerify(
  adminUrl: string,
  events: number = AUDIT_VERIFY_TARGET.events,
): Promise<AuditVerifyResult> {
  const { url, connection } = await freshBenchDatabase(adminUrl, 'cebs_bench_audit_verify', 2);
  useConnection(connection);
  try {
    const organizationId = randomUUID();
    const template = canonicalTemplate({
      id: ID_MARK,
      organizationId,
      occurredAt: new Date('2026-11-01T00:00:00.000Z'),
      action: 'organization.updated',
      actorType: 'system',
      actorUserId: null,
      tokenId: null,
      caseId: null,
      targetType: null,
      targetId: null,
      ip: null,
      userAgent: null,
      requestId: null,
      metadata: {},
    });
    const seedStarted = performance.now();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql.unsafe(
      `create function pg_temp.seed_chain(org uuid, template text, id_mark text, events int, genesis text) returns void language plpgsql as $$
      declare prev text := genesis; h text; id uuid;
      begin
        for n in 1 .. events loop
          id := gen_random_uuid();
          h := encode(sha256(convert_to(replace(replace(replace(template, id_mark, id::text),
            chr(1) || 'P' || chr(1), prev), chr(1) || 'S' || chr(1), n::text), 'UTF8')), 'hex');
          insert into audit_events (id, organization_id, sequence, occurred_at, action, actor_type, metadata, prev_hash, hash)
          values (id, org, n, '2026-11-01T00:00:00.000Z', 'organization.updated', 'system', '{}', prev, h);
          prev := h;
        end loop;
        insert into audit_chain_heads (organization_id, sequence, hash) values (org, events, prev);
      end $$`,
    );
    await sql`select pg_temp.seed_chain(${organizationId}, ${template}, ${ID_MARK}, ${events}, ${GENESIS_HASH})`;
    await sql`analyze audit_events`;
    await sql.end();
    const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;

    const time = async <T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> => {
      const started = performance.now();
      const result = await work();
      return { ms: Math.round(performance.now() - started), result };
    };

    const whole = await time(() => verifyAuditChain(organizationId));
    if (!whole.result.valid || whole.result.checkedEvents !== events) throw new Error('seeded chain does not verify');
    const first = await time(() => verifyAuditTrail(organizationId));

    const runTimes: number[] = [];
    for (;;) {
      const run = await time(() => continueFullVerifications({ organizationId }));
      runTimes.push(run.ms);
      if (run.result === 0) break;
    }
    const [row] = await db()
      .select()
      .from(auditVerificationCheckpoints)
      .where(eq(auditVerificationCheckpoints.organizationId, organizationId));

    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      await transaction(async (tx) => {
        for (let n = 0; n < APPENDED; n += 1) recordAudit(tx, { action: 'organization.updated', organizationId });
      });
      const call = await time(() => verifyAuditTrail(organizationId));
      if (!call.result.valid || call.result.checkedEvents !== APPENDED)
        throw new Error('incremental call did not verify');
      samples.push(call.ms);
    }
    samples.sort((a, b) => a - b);
    const incremental = {
      appended: APPENDED,
      samples: SAMPLES,
      p50Ms: samples[Math.floor(SAMPLES / 2)]!,
      maxMs: samples.at(-1)!,
    };
    return {
      events,
      seedSeconds,
      wholeChainMs: whole.ms,
      firstCallMs: first.ms,
      firstCallEvents: Math.min(INCREMENTAL_LIMIT, first.result.checkedEvents),
      incremental,
      full: {
        // The last run found nothing left to do.
        runs: runTimes.length - 1,
        totalMs: runTimes.reduce((sum, ms) => sum + ms, 0),
        maxRunMs: Math.max(...runTimes),
        eventsPerRun: Math.ceil(events / Math.max(runTimes.length - 1, 1)),
        valid: row?.lastFullValid ?? null,
      },
      target: AUDIT_VERIFY_TARGET,
      passed: incremental.maxMs <= AUDIT_VERIFY_TARGET.incrementalMs && row?.lastFullValid === true,
    };
  } finally {
    await closeDb();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const events = Number(process.env.BENCH_AUDIT_EVENTS ?? AUDIT_VERIFY_TARGET.events);
  const result = await benchAuditVerify(
    process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres',
    events,
  );
  console.log(JSON.stringify(result, null, 2));
}
