import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { continueFullVerifications, eventHash, recordAudit, verifyAuditTrail } from '../../lib/audit';
import { advanceCheckpoint } from '../../lib/audit/verify';
import { db } from '../../lib/db/client';
import { auditEvents, auditVerificationCheckpoints } from '../../lib/db/schema';
import { transaction } from '../../lib/db/transaction';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { forgeAuditRows } from '../harness/audit';

const verify = (caller: TestUser) =>
  invoke(routes.verifyAuditChain, { token: caller.accessToken, path: { orgId: caller.organizationId } });

/** Appends `count` events to the caller's organization in one transaction. */
const append = (owner: TestUser, count: number) =>
  transaction(async (tx) => {
    for (let i = 0; i < count; i += 1)
      recordAudit(tx, { action: 'organization.updated', organizationId: owner.organizationId });
  });

const eventAt = async (organizationId: string, sequence: number) => {
  const [event] = await db()
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.organizationId, organizationId), eq(auditEvents.sequence, sequence)));
  return event!;
};

const checkpointOf = async (organizationId: string) => {
  const [row] = await db()
    .select()
    .from(auditVerificationCheckpoints)
    .where(eq(auditVerificationCheckpoints.organizationId, organizationId));
  return row;
};

/** The event's metadata rewritten and its own hash recomputed: only a full re-hash of the chain after it shows it. */
const rewriteMetadata = (event: typeof auditEvents.$inferSelect) =>
  forgeAuditRows(() =>
    db()
      .update(auditEvents)
      .set({ metadata: { forged: true } })
      .where(eq(auditEvents.id, event.id)),
  );

describe('GET /organization/{orgId}/audit-events/verify is incremental', () => {
  it('checks only the events appended since the last call, not the whole chain again', async () => {
    // Prepare: a chain of 40 events, verified once.
    const owner = await createUser();
    await append(owner, 40);
    const first = expectData(await verify(owner));
    expect(first).toMatchObject({ valid: true, checkedEvents: first.headSequence });
    // Act: three more events, verified again.
    await append(owner, 3);
    const second = expectData(await verify(owner));
    // Assess: the second call read the three new events, not the 40 before them.
    expect(second).toMatchObject({ valid: true, headSequence: first.headSequence + 3 });
    expect(second.checkedEvents).toBe(3);
    expect(second.checkpoint).toMatchObject({
      sequence: first.headSequence,
      hash: first.headHash,
      method: 'incremental',
    });
    expect(second.verifiedThroughSequence).toBe(second.headSequence);
    expect(expectData(await verify(owner))).toMatchObject({ valid: true, checkedEvents: 0 });
  });

  it('goes on from where a call stopped when more was appended than one call checks', async () => {
    const owner = await createUser();
    await append(owner, 12);
    const head = (await verifyAuditTrail(owner.organizationId, { limit: 5 })).headSequence;
    // The first call above checked 5; the next ones go on 5 at a time.
    const second = await verifyAuditTrail(owner.organizationId, { limit: 5 });
    expect(second).toMatchObject({ valid: true, checkedEvents: 5, verifiedThroughSequence: 10, complete: false });
    const third = await verifyAuditTrail(owner.organizationId, { limit: 5 });
    expect(third).toMatchObject({
      valid: true,
      checkedEvents: head - 10,
      verifiedThroughSequence: head,
      complete: true,
    });
  });

  it('answers invalid at the checkpoint when the event it names was changed since', async () => {
    const owner = await createUser();
    await append(owner, 6);
    const first = expectData(await verify(owner));
    const anchor = await eventAt(owner.organizationId, first.headSequence);
    // Its content and its own hash rewritten: the chain after it (none) cannot show it, the checkpoint does.
    const changed = { ...anchor, metadata: { forged: true } };
    await forgeAuditRows(() =>
      db()
        .update(auditEvents)
        .set({ metadata: changed.metadata, hash: eventHash(changed) })
        .where(eq(auditEvents.id, anchor.id)),
    );
    await append(owner, 2);
    expect(expectData(await verify(owner))).toMatchObject({
      valid: false,
      firstInvalidSequence: first.headSequence,
      verifiedThroughSequence: first.headSequence - 1,
    });
    // Nothing moved on a chain found broken.
    expect((await checkpointOf(owner.organizationId))!.sequence).toBe(first.headSequence);
  });

  it('keeps the checkpoint right when calls run at once on separate connections, and never moves it back', async () => {
    const owner = await createUser();
    await append(owner, 30);
    // Eight calls at once while events are appended: each answers valid and the checkpoint ends on a real event.
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => verify(owner)),
      append(owner, 5),
      append(owner, 5),
    ]);
    for (const answer of answers.slice(0, 8))
      expect(expectData(answer as Awaited<ReturnType<typeof verify>>).valid).toBe(true);
    const row = (await checkpointOf(owner.organizationId))!;
    expect((await eventAt(owner.organizationId, row.sequence)).hash).toBe(row.hash);
    const last = expectData(await verify(owner));
    expect(last).toMatchObject({ valid: true, verifiedThroughSequence: last.headSequence });
    // Points of the chain offered at once, in any order: the furthest one stays.
    const points = await Promise.all(
      Array.from({ length: 10 }, (_, i) => eventAt(owner.organizationId, last.headSequence - i)),
    );
    await Promise.all(points.map((p) => advanceCheckpoint(owner.organizationId, p, 'incremental')));
    expect(await advanceCheckpoint(owner.organizationId, points[5]!, 'incremental')).toBe(false);
    expect((await checkpointOf(owner.organizationId))!.sequence).toBe(last.headSequence);
    // Behind the code's back too: the table refuses a checkpoint moving back and any row removed.
    await expect(
      db()
        .update(auditVerificationCheckpoints)
        .set({ sequence: 1 })
        .where(eq(auditVerificationCheckpoints.organizationId, owner.organizationId)),
    ).rejects.toThrow();
    await expect(
      db()
        .delete(auditVerificationCheckpoints)
        .where(eq(auditVerificationCheckpoints.organizationId, owner.organizationId)),
    ).rejects.toThrow();
  });
});

describe('full re-verification in the background', () => {
  it('finds a change before the checkpoint, and every verify call reports it from then on', async () => {
    // Prepare: a verified chain, then an event before the checkpoint rewritten (its own hash left).
    const owner = await createUser();
    await append(owner, 10);
    const verified = expectData(await verify(owner));
    const target = await eventAt(owner.organizationId, 4);
    await rewriteMetadata(target);
    await append(owner, 2);
    // The incremental call cannot see it: it starts after the checkpoint.
    expect(expectData(await verify(owner)).valid).toBe(true);
    // Act: the background pass.
    expect(await continueFullVerifications({ organizationId: owner.organizationId })).toBe(4);
    // Assess
    const after = expectData(await verify(owner));
    expect(after).toMatchObject({
      valid: false,
      firstInvalidSequence: 4,
      lastFullVerification: { valid: false, firstInvalidSequence: 4, throughSequence: 3 },
    });
    // More events, more incremental passes that find nothing wrong: still invalid.
    await append(owner, 3);
    const later = expectData(await verify(owner));
    expect(later).toMatchObject({ valid: false, firstInvalidSequence: 4, checkedEvents: 3 });
    expect(later.headSequence).toBe(verified.headSequence + 5);
    // Maintenance does not run it again, and the table refuses the failure being overwritten.
    expect(await continueFullVerifications({ organizationId: owner.organizationId })).toBe(0);
    await expect(
      db()
        .update(auditVerificationCheckpoints)
        .set({ lastFullValid: true, lastFullFirstInvalidSequence: null })
        .where(eq(auditVerificationCheckpoints.organizationId, owner.organizationId)),
    ).rejects.toThrow();
    expect(expectData(await verify(owner))).toMatchObject({ valid: false, firstInvalidSequence: 4 });
  });

  it('runs in bounded batches, resumes across runs and records its result, moving the checkpoint', async () => {
    const owner = await createUser();
    await append(owner, 20);
    const head = (await verifyAuditTrail(owner.organizationId, { limit: 1 })).headSequence;
    const run = () => continueFullVerifications({ organizationId: owner.organizationId, maxEvents: 8, batchSize: 3 });
    expect(await run()).toBe(8);
    const midway = expectData(await verify(owner));
    expect(midway.runningFullVerification).toMatchObject({ throughSequence: 8 });
    expect(midway.lastFullVerification).toBeNull();
    // Appended meanwhile: the full pass goes on to the head as it finds it, past the call's checkpoint.
    await append(owner, 2);
    expect(await run()).toBe(8);
    expect(await run()).toBe(head + 2 - 16);
    const done = expectData(await verify(owner));
    expect(done.runningFullVerification).toBeNull();
    expect(done.lastFullVerification).toMatchObject({
      valid: true,
      firstInvalidSequence: null,
      throughSequence: head + 2,
    });
    expect(Date.parse(done.lastFullVerification!.finishedAt)).toBeGreaterThanOrEqual(
      Date.parse(done.lastFullVerification!.startedAt),
    );
    expect(done).toMatchObject({ valid: true, checkedEvents: 0, checkpoint: { sequence: head + 2, method: 'full' } });
    // Finished and valid: not due again until a day has passed.
    expect(await run()).toBe(0);
  });

  it('finds a chain rewritten from before the checkpoint on, head included, by the checkpoint it passes through', async () => {
    const owner = await createUser();
    await append(owner, 6);
    const verified = expectData(await verify(owner));
    // Every event from 3 on rewritten and re-chained, head too: only the checkpoint remembers.
    await forgeAuditRows(async () => {
      let previous = (await eventAt(owner.organizationId, 2)).hash;
      for (let sequence = 3; sequence <= verified.headSequence; sequence += 1) {
        const event = { ...(await eventAt(owner.organizationId, sequence)), metadata: { forged: sequence } };
        const rechained = { ...event, prevHash: previous };
        const hash = eventHash(rechained);
        await db()
          .update(auditEvents)
          .set({ metadata: rechained.metadata, prevHash: previous, hash })
          .where(eq(auditEvents.id, event.id));
        previous = hash;
      }
      await db().execute(
        sql`update audit_chain_heads set hash = ${previous}, prev_hash = null where organization_id = ${owner.organizationId}`,
      );
    });
    await continueFullVerifications({ organizationId: owner.organizationId });
    expect(expectData(await verify(owner))).toMatchObject({
      valid: false,
      lastFullVerification: { valid: false, firstInvalidSequence: verified.headSequence },
    });
  });
});

describe('audit_verification_checkpoints', () => {
  it('is written by lib/audit alone: no other source names it', () => {
    const root = join(import.meta.dirname, '../..');
    const sources = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? sources(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [join(dir, entry.name)]
            : [],
      );
    const naming = ['lib', 'functions', 'infra', 'schemas']
      .flatMap(sources)
      .filter((file) =>
        /auditVerificationCheckpoints|audit_verification_checkpoints/.test(readFileSync(join(root, file), 'utf8')),
      )
      .map((file) => relative('.', file));
    // The schema defines it, the migration step takes DELETE and TRUNCATE away from the service's role.
    expect(naming.sort()).toEqual([
      'infra/functions/migrate.ts',
      'lib/audit/full-verification.ts',
      'lib/audit/verify.ts',
      'lib/db/schema/audit.ts',
    ]);
  });
});
