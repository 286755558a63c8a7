import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, type InvokeResult, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { seedThread } from '../harness/material';

/** Lambda's response payload limit: the serialized result, where the body is escaped a second time. */
const LAMBDA_RESPONSE_LIMIT = 6_291_456;
const lambdaResultBytes = (result: InvokeResult) =>
  Buffer.byteLength(
    JSON.stringify({ statusCode: result.status, headers: result.headers, body: JSON.stringify(result.body) }),
  );

const custody = (user: TestUser, caseId: string, query: Record<string, string> = {}) =>
  invoke(routes.getCaseCustody, { token: user.accessToken, path: { caseId }, query });

async function openCase(owner: TestUser) {
  return expectData(
    await invoke(routes.createCase, {
      token: owner.accessToken,
      organization: owner.organizationId,
      body: { name: 'Big v. Case' },
    }),
    201,
  ).id as string;
}

/** `count` emails in one thread of the case, with hashes and sizes, written by one statement. */
async function seedEmails(owner: TestUser, caseId: string, count: number, first = 1) {
  const { threadId } = await seedThread(caseId, [{ minute: 0 }]);
  await db().execute(sql`
    insert into emails (id, case_id, thread_id, grant_id, external_id, source_email, sha256, size_bytes,
                        import_source, imported_by_id, created_at, updated_at)
    select gen_random_uuid(), ${caseId}, ${threadId}, 'seed', '<seed-' || g || '@big.example>', 'ann@big.example',
           md5(g::text) || md5((g + 1)::text), 1000 + g, 'a-rather-long-export-file-name-2026-11.mbox', ${owner.id},
           timestamptz '2026-11-01T00:00:00Z' + g * interval '1 millisecond', now()
    from generate_series(${first}::int, ${first + count - 1}::int) g`);
}

/** `count` audit events of the case (a read each), appended after the organization's head (not chained: no hash is checked here). */
async function seedEvents(owner: TestUser, caseId: string, count: number) {
  await db().execute(sql`
    insert into audit_events (id, organization_id, sequence, occurred_at, action, actor_type, actor_user_id,
                              token_id, case_id, target_type, target_id, ip, user_agent, request_id, metadata,
                              prev_hash, hash)
    select gen_random_uuid(), ${owner.organizationId}, head.sequence + g, now(), 'evidence.thread_emails.read', 'user',
           ${owner.id}, ${owner.id}, ${caseId}, 'case', ${caseId}, '203.0.113.10',
           'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
           'req-' || g, jsonb_build_object('path', jsonb_build_object('caseId', ${caseId}::text, 'threadId', gen_random_uuid())),
           md5(g::text) || md5((g + 1)::text), md5((g + 2)::text) || md5((g + 3)::text)
    from generate_series(1, ${count}) g,
         (select sequence from audit_chain_heads where organization_id = ${owner.organizationId}) head`);
  await db().execute(
    sql`update audit_chain_heads set sequence = sequence + ${count} where organization_id = ${owner.organizationId}`,
  );
}

describe('GET /cases/{caseId}/custody: answers Lambda can carry (issue 32)', () => {
  it('stays under the 6 MB response limit with 21,000 items', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    await seedEmails(owner, caseId, 21_000);

    const result = await custody(owner, caseId);

    const data = expectData(result);
    expect(lambdaResultBytes(result)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT);
    expect(data.itemCount).toBe(21_001);
    expect(data.items.data).toHaveLength(100);
    expect(data.items.nextCursor).toEqual(expect.any(String));
    // The largest page allowed stays far below the limit too.
    const largest = await custody(owner, caseId, { perPage: '1000' });
    expect(expectData(largest).items.data).toHaveLength(1000);
    expect(lambdaResultBytes(largest)).toBeLessThan(1_000_000);
  });

  it('stays under the 6 MB response limit with 7,000 audit events', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    await seedEvents(owner, caseId, 7_000);

    const result = await custody(owner, caseId);

    const data = expectData(result);
    expect(lambdaResultBytes(result)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT);
    expect(data.eventCount).toBe(7_001);
    expect(data.events.data).toHaveLength(100);
    const largest = await custody(owner, caseId, { perPage: '1000', list: 'events' });
    expect(expectData(largest).items).toBeNull();
    expect(lambdaResultBytes(largest)).toBeLessThan(1_500_000);
  });
});

describe('GET /cases/{caseId}/custody: pages behind cursors (issue 32)', () => {
  it('walks every item and event once, in a stable order, each list behind its own cursor', async () => {
    // Prepare: 2,500 emails, a thread with attachments-free emails, and 1,200 events.
    const owner = await createUser();
    const caseId = await openCase(owner);
    await seedEmails(owner, caseId, 2_500);
    await seedEvents(owner, caseId, 1_200);
    const expectedItems = (await db().execute(
      sql`select id::text from emails where case_id = ${caseId} order by created_at, id`,
    )) as unknown as { id: string }[] | { rows: { id: string }[] };
    const itemIds = (Array.isArray(expectedItems) ? expectedItems : expectedItems.rows).map((row) => row.id);

    // Act: items only, then events only.
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = expectData(
        await custody(owner, caseId, { perPage: '1000', list: 'items', ...(cursor ? { itemsCursor: cursor } : {}) }),
      );
      expect(page.events).toBeNull();
      expect(page.itemCount).toBe(2_501);
      items.push(...page.items.data);
      cursor = page.items.nextCursor;
      pages += 1;
    } while (cursor);
    const events: any[] = [];
    cursor = null;
    do {
      const page: any = expectData(
        await custody(owner, caseId, { perPage: '500', list: 'events', ...(cursor ? { eventsCursor: cursor } : {}) }),
      );
      events.push(...page.events.data);
      cursor = page.events.nextCursor;
    } while (cursor);

    // Assess
    expect(pages).toBe(3);
    expect(items.map((item) => item.id)).toEqual(itemIds);
    const sequences = events.map((event) => event.sequence);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    // case.created, the seeded reads, and the custody reads made by the item walk (one per hour, counted).
    expect(events.filter((event) => event.action === 'evidence.thread_emails.read')).toHaveLength(1_200);
  });

  it('counts what an import added and every later event, page after page', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    await seedEmails(owner, caseId, 30);
    const before = expectData(await custody(owner, caseId, { list: 'items' }));
    // An import adds items (and a thread) and records its event in the same transaction.
    await seedEmails(owner, caseId, 12, 31);
    expectData(
      await invoke(routes.updateCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        path: { caseId },
        body: { name: 'Big v. Case, more evidence' },
      }),
    );
    const after = expectData(await custody(owner, caseId, { list: 'items', perPage: '50' }));
    // The same read again within the hour is counted on its event, not a new one.
    const again = expectData(await custody(owner, caseId, { list: 'items', perPage: '50' }));
    expect(before).toMatchObject({ itemCount: 31, eventCount: 1 });
    // case.created, the first read, case.updated.
    expect(after).toMatchObject({ itemCount: 44, eventCount: 3 });
    // The read before it (another query) is one more event; no item changed.
    expect(again).toMatchObject({ itemCount: 44, eventCount: 4 });
  });

  it('reads a late page in the same number of statements as the first', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    await seedEmails(owner, caseId, 1_500);
    const first = await countQueries(() => custody(owner, caseId, { perPage: '1000' }));
    const cursor = expectData(first.result).items.nextCursor;
    const late = await countQueries(() => custody(owner, caseId, { perPage: '1000', itemsCursor: cursor }));
    expect(expectData(late.result).items.data).toHaveLength(501);
    expect(late.queries).toBe(first.queries);
  });

  it('refuses a cursor no answer gave and a page over 1000, naming the parameter', async () => {
    const owner = await createUser();
    const caseId = await openCase(owner);
    expectError(await custody(owner, caseId, { itemsCursor: 'bm90LWEtY3Vyc29y' }), 400, 'VALIDATION_FAILED', [
      'query.itemsCursor',
    ]);
    expectError(await custody(owner, caseId, { eventsCursor: 'WyJ4Il0' }), 400, 'VALIDATION_FAILED', [
      'query.eventsCursor',
    ]);
    expectError(await custody(owner, caseId, { itemsCursor: 'not a cursor!' }), 400, 'VALIDATION_FAILED', [
      'query.itemsCursor',
    ]);
    expectError(await custody(owner, caseId, { perPage: '1001' }), 400, 'VALIDATION_FAILED', ['query.perPage']);
    expectError(await custody(owner, caseId, { list: 'both' }), 400, 'VALIDATION_FAILED', ['query.list']);
  });
});
