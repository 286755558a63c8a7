import { randomBytes } from 'node:crypto';
import { eq, isNull } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { emailTags, taggingJobs } from '../../lib/db/schema';
import { drainTaggingJobs, requeueStalledTaggingJobs, runTaggingJob } from '../../lib/review';
import { auditEventsOf } from '../harness/audit';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { UNKNOWN_ID } from '../harness/ids';
import { expectData, expectError, invoke } from '../harness/invoke';
import { seedThread } from '../harness/material';
import { describeSecurity } from '../harness/security';
import { createTagRow } from '../harness/tags';

/** A tag row written directly (the tag routes are another part's). */
async function insertTag(
  organizationId: string,
  caseId: string,
  side: 'org' | 'opposing_council' = 'org',
  createdById: string | null = null,
) {
  const name = `Tag ${randomBytes(3).toString('hex')}`;
  return createTagRow({ organizationId, caseId, type: 'case', name, side, createdById });
}

/** A job row written directly, as the start stores it, to run it step by step. */
async function insertJob(values: {
  organizationId: string;
  caseId: string;
  createdById: string;
  side?: 'org' | 'opposing_council';
  add?: string[];
  remove?: string[];
  filter?: Record<string, unknown>;
}) {
  const [job] = await db()
    .insert(taggingJobs)
    .values({ side: 'org', filter: { kind: 'email' }, ...values })
    .returning();
  return job!;
}

async function scenario() {
  const s = await caseWithOwner();
  const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
  const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
  const hot = await insertTag(s.organizationId, s.caseId);
  const old = await insertTag(s.organizationId, s.caseId);
  const theirs = await insertTag(s.organizationId, s.caseId, 'opposing_council', opposing.id);
  const court = await seedThread(s.caseId, [
    { minute: 0, to: ['dana@court.example'], tagIds: [old.id] },
    { minute: 1, to: ['erin@court.example'] },
    { minute: 2, to: ['bob@roe.example'], tagIds: [old.id] },
  ]);
  const other = await seedThread(s.caseId, [
    { minute: 3, to: ['carl@court.example'], starred: true },
    { minute: 4, to: ['carl@court.example'], tagIds: [old.id] },
    { minute: 5, to: ['ann@lee.example'] },
  ]);
  const get = (jobId: string, token = s.owner.accessToken, caseId = s.caseId) =>
    invoke(routes.getTaggingJob, { token, path: { caseId, jobId } });
  const start = (body: Record<string, unknown>, token = s.owner.accessToken) =>
    invoke(routes.tagEvidence, { token, path: { caseId: s.caseId }, body });
  const activeTagged = async (tagId: string) =>
    (await db().select().from(emailTags).where(eq(emailTags.tagId, tagId)))
      .filter((l) => l.removedAt === null)
      .map((l) => l.emailId)
      .sort();
  return { ...s, opposing, viewer, hot, old, theirs, court, other, get, start, activeTagged };
}

describe('GET /cases/{caseId}/tagging/{jobId}', () => {
  it('tags the emails the filter matches across the case, removes, reports progress and ends succeeded', async () => {
    const s = await scenario();
    const started = expectData(
      await s.start({ add: [s.hot.id], remove: [s.old.id], filter: { kind: 'email', domains: ['COURT.example'] } }),
      202,
    );
    await drainTaggingJobs();
    const job = expectData(await s.get(started.id));
    expect(job).toEqual({
      ...started,
      status: 'succeeded',
      totalItems: 4,
      processedItems: 4,
      addedLinks: 4,
      removedLinks: 2,
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    const courtEmails = [s.court.emailIds[0]!, s.court.emailIds[1]!, s.other.emailIds[0]!, s.other.emailIds[1]!].sort();
    expect(await s.activeTagged(s.hot.id)).toEqual(courtEmails);
    expect(await s.activeTagged(s.old.id)).toEqual([s.court.emailIds[2]!]);
    const [finished] = await auditEventsOf(s.organizationId, 'evidence.tagging_job.finished');
    expect(finished!.metadata).toMatchObject({
      status: 'succeeded',
      processedItems: 4,
      addedLinks: 4,
      removedLinks: 2,
    });
  });

  it('runs in batches, each with its progress and audit event, and resumes after its cursor when paused', async () => {
    const s = await scenario();
    const job = await insertJob({
      organizationId: s.organizationId,
      caseId: s.caseId,
      createdById: s.owner.id,
      add: [s.hot.id],
      filter: { kind: 'email', excludeTags: [s.old.id] },
    });
    expect(await runTaggingJob(job.id, { batchSize: 1, shouldPause: () => true })).toBe('paused');
    const paused = expectData(await s.get(job.id));
    expect(paused).toMatchObject({ status: 'queued', totalItems: 3, processedItems: 1, addedLinks: 1 });
    expect(await runTaggingJob(job.id, { batchSize: 1 })).toBe('succeeded');
    expect(expectData(await s.get(job.id))).toMatchObject({
      status: 'succeeded',
      totalItems: 3,
      processedItems: 3,
      addedLinks: 3,
    });
    expect(await s.activeTagged(s.hot.id)).toEqual(
      [s.court.emailIds[1]!, s.other.emailIds[0]!, s.other.emailIds[2]!].sort(),
    );
    const batches = (await auditEventsOf(s.organizationId, 'evidence.tagged')).filter((e) => e.targetId === job.id);
    expect(batches.map((e) => e.metadata.items)).toEqual([1, 1, 1]);
    expect(batches[0]!.metadata).toMatchObject({ job: job.id, added: 1, changes: [{ op: 'add', tagId: s.hot.id }] });
    // A finished job is not run again.
    expect(await runTaggingJob(job.id)).toBe('skipped');
  });

  it("filters with the job's side: a tag of the other side matches nothing and excludes nothing", async () => {
    const s = await scenario();
    await db().insert(emailTags).values({ emailId: s.court.emailIds[1]!, tagId: s.theirs.id, addedBy: 'user' });
    const untagged = await insertJob({
      organizationId: s.organizationId,
      caseId: s.caseId,
      createdById: s.owner.id,
      add: [s.hot.id],
      filter: { kind: 'email', untagged: true, threadId: s.court.threadId },
    });
    expect(await runTaggingJob(untagged.id)).toBe('succeeded');
    // Email 1 of the court thread carries only the other side's tag: untagged for the firm.
    expect(await s.activeTagged(s.hot.id)).toEqual([s.court.emailIds[1]!]);
  });

  it('answers 404 for a job of another case, of the other side and for an unknown id; viewers are refused', async () => {
    const s = await scenario();
    const started = expectData(await s.start({ add: [s.hot.id], filter: { kind: 'email', starred: true } }), 202);
    await drainTaggingJobs();
    expectData(await s.get(started.id));
    // Opposing counsel may not see the firm's job; the firm may not see theirs.
    expectError(await s.get(started.id, s.opposing.accessToken), 404, 'NOT_FOUND');
    const theirs = expectData(
      await s.start({ add: [s.theirs.id], filter: { kind: 'email' } }, s.opposing.accessToken),
      202,
    );
    await drainTaggingJobs();
    expect(expectData(await s.get(theirs.id, s.opposing.accessToken))).toMatchObject({
      status: 'succeeded',
      processedItems: 6,
      add: [s.theirs.id],
    });
    expectError(await s.get(theirs.id), 404, 'NOT_FOUND');
    // Their job's event keeps their tags and filter out of the firm's trail.
    const events = await auditEventsOf(s.organizationId, 'evidence.tagged');
    const theirEvents = events.filter((e) => e.targetId === theirs.id);
    expect(theirEvents.length).toBeGreaterThan(1);
    for (const event of theirEvents) expect(JSON.stringify(event.metadata)).not.toContain(s.theirs.id);
    // Another case of the organization, the same owner.
    const otherCase = await caseWithOwner();
    const foreign = await insertJob({
      organizationId: otherCase.organizationId,
      caseId: otherCase.caseId,
      createdById: otherCase.owner.id,
    });
    expectError(await s.get(foreign.id), 404, 'NOT_FOUND');
    // Another organization's owner is refused at the case.
    const stranger = await invoke(routes.getTaggingJob, {
      token: otherCase.owner.accessToken,
      path: { caseId: s.caseId, jobId: started.id },
    });
    expect(stranger.status).toBe(403);
    expectError(await s.get(UNKNOWN_ID), 404, 'NOT_FOUND');
    expectError(await s.get('not-an-id'), 404, 'NOT_FOUND');
    expectError(await s.get(started.id, s.viewer.accessToken), 403, 'INSUFFICIENT_ROLE');
  });

  it('sends a job whose worker died to the worker again, and it resumes after its cursor', async () => {
    const s = await scenario();
    const job = await insertJob({
      organizationId: s.organizationId,
      caseId: s.caseId,
      createdById: s.owner.id,
      add: [s.hot.id],
      filter: { kind: 'email', threadId: s.other.threadId },
    });
    // A first run committed one batch, then its worker died: running, no progress for ten minutes.
    expect(await runTaggingJob(job.id, { batchSize: 1, shouldPause: () => true })).toBe('paused');
    await db()
      .update(taggingJobs)
      .set({ status: 'running', updatedAt: new Date(Date.now() - 10 * 60_000) })
      .where(eq(taggingJobs.id, job.id));
    expect(await requeueStalledTaggingJobs()).toBeGreaterThanOrEqual(1);
    await drainTaggingJobs();
    expect(expectData(await s.get(job.id))).toMatchObject({
      status: 'succeeded',
      totalItems: 3,
      processedItems: 3,
      addedLinks: 3,
    });
    expect(await s.activeTagged(s.hot.id)).toEqual([...s.other.emailIds].sort());
  });

  it('tags 1,000 emails by filter in batches', async () => {
    const s = await scenario();
    const big = await seedThread(
      s.caseId,
      Array.from({ length: 1000 }, (_, minute) => ({ minute })),
    );
    const job = await insertJob({
      organizationId: s.organizationId,
      caseId: s.caseId,
      createdById: s.owner.id,
      add: [s.hot.id],
      filter: { kind: 'email', threadId: big.threadId },
    });
    expect(await runTaggingJob(job.id, { batchSize: 300 })).toBe('succeeded');
    expect(expectData(await s.get(job.id))).toMatchObject({ totalItems: 1000, processedItems: 1000, addedLinks: 1000 });
    const links = await db().select({ id: emailTags.id }).from(emailTags).where(isNull(emailTags.removedAt));
    expect(links.length).toBeGreaterThanOrEqual(1000);
  });
});

describeSecurity(routes.getTaggingJob, {
  request: async ({ caseId, organizationId, owner }) => {
    const job = await insertJob({ organizationId, caseId, createdById: owner.id });
    return { path: { caseId, jobId: job.id } };
  },
  succeeds: true,
});
