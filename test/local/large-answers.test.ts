import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ImportCaseNotesDto } from '../../schemas/material/material';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { loadHandler } from '../../infra/local/router';
import { LAMBDA_PAYLOAD_BYTES, MAX_REQUEST_BODY_BYTES } from '../../lib/http/payload-limits';
import { db } from '../../lib/db/client';
import { devices, networkConversations } from '../../lib/db/schema';
import { testClock } from '../../lib/clock';
import { LocalMailSink } from '../../lib/mail/transport';
import { ANSWER_LINK_SECONDS, removeExpiredAnswers, storeAnswer } from '../../lib/storage/answers';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { ownDataDir } from '../harness/data-dir';
import { onTierWithoutCharges } from '../harness/billing';
import { caseWithOwner } from '../harness/cases';
import { createProfile, extractorDevice, seedThread } from '../harness/material';

/**
 * Issue 32, "What was seen" 1 and 2, through the local server, which enforces Lambda's limits as
 * the cloud does (infra/local/lambda-limits.ts): a result over 6 MB serialized is the gateway's
 * bare 500, a request body over the service's limit is 413. Every answer the contract allows
 * arrives whole: compressed when the client accepts it, else (or when still too large) by 303 to
 * a signed link holding exactly the envelope.
 */

ownDataDir('cebs-large-answers-');
let server: Server;
let base: string;

beforeAll(async () => {
  server = createLocalServer({ mailSink: new LocalMailSink() });
  base = await listen(server, 0);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface Answer {
  status: number;
  headers: Headers;
  envelope: any;
}

/** One request through the local server, redirects not followed; `encoding` is the Accept-Encoding sent. */
async function call(
  path: string,
  options: { user: TestUser; encoding: string; method?: string; body?: unknown; headers?: Record<string, string> },
): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method: options.method ?? 'GET',
    redirect: 'manual',
    headers: {
      authorization: `Bearer ${options.user.accessToken}`,
      organization: options.user.organizationId,
      'accept-encoding': options.encoding,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  // fetch decodes a Content-Encoding it was sent.
  const text = await response.text();
  return { status: response.status, headers: response.headers, envelope: text ? JSON.parse(text) : undefined };
}

/** Follows a 303 as a client does: GET of its Location, without the API's credentials. */
async function follow(answer: Answer, encoding: string) {
  expect(answer.status, JSON.stringify(answer.envelope)).toBe(303);
  const location = answer.headers.get('location')!;
  expect(answer.envelope.see.url).toBe(location);
  const response = await fetch(location, { headers: { 'accept-encoding': encoding } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  return { headers: response.headers, envelope: JSON.parse(await response.text()) };
}

/** The envelope without its timestamp: two answers of one request differ only there. */
const withoutTime = ({ timestamp, ...rest }: { timestamp: string }) => {
  expect(Number.isNaN(Date.parse(timestamp))).toBe(false);
  return rest;
};

/**
 * The route's answer three ways: without compression (too large: 303, followed), gzip and br.
 * Each arrives whole and they are the same envelope; the plain one is over Lambda's limit, which
 * is what makes this route's test worth having.
 */
async function expectDeliveredWhole(
  path: string,
  user: TestUser,
  options: { method?: string; body?: unknown } = {},
  encodings = ['gzip', 'br'],
) {
  const plain = await call(path, { user, encoding: 'identity', ...options });
  expect(plain.headers.get('x-request-id')).toBeTruthy();
  const followed = await follow(plain, 'identity');
  const size = Buffer.byteLength(JSON.stringify(followed.envelope));
  // The body Lambda would return, escaped once more in the serialized result: over the limit.
  expect(
    Buffer.byteLength(JSON.stringify({ statusCode: 200, body: JSON.stringify(followed.envelope) })),
  ).toBeGreaterThan(LAMBDA_PAYLOAD_BYTES);
  const answers = [followed.envelope];
  for (const encoding of encodings) {
    const compressed = await call(path, { user, encoding, ...options });
    if (compressed.status === 303) answers.push((await follow(compressed, encoding)).envelope);
    else {
      expect(compressed.status, JSON.stringify(compressed.envelope).slice(0, 300)).toBeLessThan(300);
      expect(compressed.headers.get('content-encoding')).toBe(encoding);
      answers.push(compressed.envelope);
    }
  }
  const [first, ...others] = answers.map(withoutTime);
  for (const other of others) expect(other).toEqual(first);
  return { envelope: followed.envelope, size };
}

/** HTML of about `bytes` bytes, as a mail client writes it (quotes to escape, line breaks). */
const html = (bytes: number, seed: string) => {
  const paragraph = `<p class="body" style="margin:0">Dear counsel, re ${seed}: the "contract" terms\r\nare attached.</p>\n`;
  return paragraph.repeat(Math.ceil(bytes / paragraph.length));
};

describe('answers over Lambda 6 MB response limit arrive whole', () => {
  it('POST /billing/report: the JSON report of 50,000 rows, and its idempotent replay', async () => {
    const owner = await createUser();
    await onTierWithoutCharges(owner.organizationId, 'tier3');
    const caseRow = await createCaseRow(owner.organizationId);
    const start = new Date('2026-03-01T00:00:00.000Z');
    await db().execute(sql`
      insert into billing_rows (id, organization_id, case_id, sku_key, description, quantity, unit_amount_cents, amount_cents, status, informational, idempotency_key, charge_key, created_at, updated_at)
      select gen_random_uuid(), ${owner.organizationId}::uuid, ${caseRow.id}::uuid, 'case_pro_upgrade', 'Pro upgrade of case ' || n, 1, n, n, 'paid', false,
             'big:' || ${owner.organizationId} || ':' || n || ':0', 'big:' || ${owner.organizationId} || ':' || n,
             ${start.toISOString()}::timestamptz + (n || ' seconds')::interval, now()
      from generate_series(1, 50000) n`);
    const body = { format: 'json', startDate: start.toISOString(), endDate: '2026-03-31T23:59:59.999Z' };

    const key = { 'idempotency-key': `report-${randomBytes(4).toString('hex')}` };
    const post = (encoding: string, headers: Record<string, string> = {}) =>
      call('/billing/report', { user: owner, encoding, method: 'POST', body, headers });

    // Without compression: over the limit, delivered by the link; the envelope is the whole report.
    const first = await post('identity', key);
    const { envelope } = await follow(first, 'identity');
    expect(envelope.data.organizations[0].cases[0].rows).toHaveLength(50_000);
    expect(envelope.data.grandTotalChargedCents).toBe((50_000 * 50_001) / 2);
    expect(Buffer.byteLength(JSON.stringify({ statusCode: 200, body: JSON.stringify(envelope) }))).toBeGreaterThan(
      LAMBDA_PAYLOAD_BYTES,
    );
    // Compressed it fits: the same envelope in one answer.
    const compressed = await post('br');
    expect(compressed.status).toBe(200);
    expect(compressed.headers.get('content-encoding')).toBe('br');
    const once = withoutTime(envelope);
    expect(withoutTime(compressed.envelope)).toEqual(once);
    // A replay of the key answers the stored envelope again: by a new link, or compressed for this request.
    const replayed = await post('identity', key);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('location')).not.toBe(first.headers.get('location'));
    expect(withoutTime((await follow(replayed, 'identity')).envelope)).toEqual(once);
    const zipped = await post('gzip', key);
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get('idempotent-replayed')).toBe('true');
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(withoutTime(zipped.envelope)).toEqual(once);
  }, 90_000);

  it('thread emails: 100 emails of about 60 KB of HTML each at perPage 100', async () => {
    const s = await caseWithOwner();
    const { threadId } = await seedThread(
      s.caseId,
      Array.from({ length: 100 }, (_, minute) => ({ minute })),
    );
    await db().execute(
      sql`update emails set body = ${html(60_000, 'thread')} || id::text where thread_id = ${threadId}::uuid`,
    );

    const { envelope } = await expectDeliveredWhole(
      `/local-emails/${s.caseId}/threads/${threadId}/emails?perPage=100`,
      s.owner,
    );
    expect(envelope.data.data).toHaveLength(100);
  });

  it('thread emails: one email of a 6 MiB body (an inline image), at any page size, even compressed', async () => {
    const s = await caseWithOwner();
    const { threadId, emailIds } = await seedThread(s.caseId, [{ minute: 1 }]);
    const image = randomBytes(4_718_592).toString('base64');
    const body = `<p>See the scan.</p><img src="data:image/png;base64,${image}">`;
    await db().execute(sql`update emails set body = ${body} where id = ${emailIds[0]!}::uuid`);

    const path = `/local-emails/${s.caseId}/threads/${threadId}/emails?perPage=1`;
    const { envelope } = await expectDeliveredWhole(path, s.owner);
    expect(envelope.data.data[0].body).toBe(body);
    // Random bytes do not compress below the limit: gzip too is delivered by the link, stored gzipped.
    const zipped = await call(path, { user: s.owner, encoding: 'gzip' });
    expect(zipped.status).toBe(303);
    expect(zipped.envelope.see.contentEncoding).toBe('gzip');
  });

  it('search-messages: 100 messages of about 60 KB each', async () => {
    const s = await caseWithOwner();
    const profile = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
    const [conversation] = await db()
      .insert(networkConversations)
      .values({ caseId: s.caseId, profileId: profile.id, externalId: 'c1', title: 'Deal', participants: ['Ann Lee'] })
      .returning();
    await db().execute(sql`
      insert into network_messages (id, case_id, conversation_id, profile_id, external_id, "from", "to", date, content, created_at, updated_at)
      select gen_random_uuid(), ${s.caseId}::uuid, ${conversation!.id}::uuid, ${profile.id}::uuid, 'm' || n, 'Ann Lee', 'Bob Roe',
             timestamptz '2026-10-01' + (n || ' minutes')::interval, ${html(60_000, 'message')} || n,
             now(), now()
      from generate_series(1, 100) n`);

    const { envelope } = await expectDeliveredWhole(
      `/professional-network/${s.caseId}/search-messages?searchText=contract&perPage=100`,
      s.owner,
    );
    expect(envelope.data.data).toHaveLength(100);
  });

  it('support tickets: 100 tickets with about 60 KB of comments each', async () => {
    const s = await caseWithOwner();
    const profile = await createProfile(s.caseId, 'chat_platform', 'ann#1', true);
    await db().execute(sql`
      insert into support_tickets (id, case_id, profile_id, ticket_id, subject, status, comments, created_at, updated_at)
      select gen_random_uuid(), ${s.caseId}::uuid, ${profile.id}::uuid, n, 'Ticket ' || n, 'open',
             jsonb_build_array(
               jsonb_build_object('author', 'agent', 'comment', ${html(30_000, 'ticket')} || n, 'createdAt', '2026-09-01T00:00:00Z'),
               jsonb_build_object('author', 'ann', 'comment', ${html(30_000, 'reply')} || n, 'createdAt', '2026-09-02T00:00:00Z')),
             now(), now()
      from generate_series(1, 100) n`);

    const { envelope } = await expectDeliveredWhole(
      `/chat-platform/${s.caseId}/profile/${profile.id}/support-tickets?perPage=100`,
      s.owner,
    );
    expect(envelope.data.data).toHaveLength(100);
  });
});

describe('one request limit', () => {
  /** A device-note import of 12 notes of HTML whose JSON is `bytes` bytes, give or take 100. */
  const notesBody = (bytes: number) => {
    const note = (id: number, length: number) => ({
      id,
      title: `Note ${id}`,
      htmlContent: html(length, `note ${id}`).slice(0, length),
    });
    const shell = { ...extractorDevice('device-big'), notes: Array.from({ length: 12 }, (_, id) => note(id, 0)) };
    // The HTML's quotes grow in JSON: scale each note's length to the bytes wanted.
    const sample = note(0, 100_000);
    const perChar =
      (Buffer.byteLength(JSON.stringify(sample)) - Buffer.byteLength(JSON.stringify(note(0, 0)))) / 100_000;
    const length = Math.floor((bytes - Buffer.byteLength(JSON.stringify(shell))) / 12 / perChar);
    return { ...shell, notes: Array.from({ length: 12 }, (_, id) => note(id, length)) };
  };

  it('refuses an import-notes body of 5.58 MiB (a 6.40 MiB event Lambda refuses) with 413 in the envelope', async () => {
    const s = await caseWithOwner();
    const body = notesBody(Math.ceil(5.58 * 1024 * 1024));
    expect(Buffer.byteLength(JSON.stringify(body)) / 1024 ** 2).toBeCloseTo(5.58, 2);
    // The event Lambda would receive for it: over its limit (the issue measured 6.40 MiB).
    const event = buildApiGatewayEvent(
      routes.importCaseNotes,
      {
        method: 'POST',
        url: `/extraction/case/import-notes?caseId=${s.caseId}`,
        headers: {},
        body: JSON.stringify(body),
      },
      {},
    );
    expect(JSON.stringify(event).length).toBeGreaterThan(LAMBDA_PAYLOAD_BYTES);

    const answer = await call(`/extraction/case/import-notes?caseId=${s.caseId}`, {
      user: s.owner,
      encoding: 'identity',
      method: 'POST',
      body,
    });

    expect(answer.status).toBe(413);
    expect(answer.envelope).toMatchObject({ statusCode: 413, error: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(answer.envelope.requestId).toEqual(expect.any(String));
  });

  it('is stated in the import-notes description, which says how the extractor splits a device', () => {
    const description = z.globalRegistry.get(ImportCaseNotesDto)?.description ?? '';
    expect(description).toContain(`${MAX_REQUEST_BODY_BYTES.toLocaleString('en-US')} bytes`);
    expect(description).toContain('several requests');
  });

  it('is enforced by the function too, for a body that reaches it: 413 in the envelope, nothing imported', async () => {
    const s = await caseWithOwner();
    const body = JSON.stringify({
      ...extractorDevice('device-direct'),
      notes: [],
      padding: ' '.repeat(MAX_REQUEST_BODY_BYTES),
    });
    const route = routes.importCaseNotes;
    const event = buildApiGatewayEvent(
      route,
      {
        method: 'POST',
        url: `/extraction/case/import-notes?caseId=${s.caseId}`,
        headers: {
          authorization: `Bearer ${s.owner.accessToken}`,
          organization: s.organizationId,
          'content-type': 'application/json',
        },
        body,
      },
      {},
    );

    const result = await (await loadHandler(route))(event, buildLambdaContext(route));

    expect(result.statusCode).toBe(413);
    expect(JSON.parse(result.body!)).toMatchObject({ statusCode: 413, error: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(await db().select().from(devices).where(eq(devices.deviceId, 'device-direct'))).toEqual([]);
  });

  it('takes a body at the limit whose escaping doubles it: its event still fits', async () => {
    const s = await caseWithOwner();
    const device = extractorDevice('device-quotes');
    const shell = JSON.stringify({ ...device, notes: [{ id: 1, title: 'Quotes', htmlContent: '' }] });
    // Every character of the content is a quote, escaped in the body and again in the event.
    const quotes = Math.floor((MAX_REQUEST_BODY_BYTES - Buffer.byteLength(shell)) / 2);
    const body = {
      ...device,
      notes: [{ id: 1, title: 'Quotes', htmlContent: '"'.repeat(Math.min(quotes, 1_000_000)) }],
    };
    const filler = MAX_REQUEST_BODY_BYTES - Buffer.byteLength(JSON.stringify(body));
    const exact = {
      ...body,
      notes: [...body.notes, { id: 2, title: 'Filler', htmlContent: '\\'.repeat(filler / 2 - 40) }],
    };
    const sent = JSON.stringify(exact);
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(MAX_REQUEST_BODY_BYTES);
    expect(Buffer.byteLength(sent)).toBeGreaterThan(MAX_REQUEST_BODY_BYTES - 100);

    const answer = await call(`/extraction/case/import-notes?caseId=${s.caseId}`, {
      user: s.owner,
      encoding: 'identity',
      method: 'POST',
      body: exact,
    });

    expect(answer.status, JSON.stringify(answer.envelope)).toBe(200);
    expect(answer.envelope.data.importedCount).toBe(2);
  });
});

describe('stored answers', () => {
  it('are removed by maintenance once their link has expired, locally (a lifecycle rule in the cloud)', async () => {
    testClock.freeze();
    const stored = await storeAnswer(Buffer.from('{"statusCode":200}'), undefined);
    const fresh = await storeAnswer(Buffer.from('{"statusCode":200}'), 'gzip');
    expect(stored.key).toMatch(/^answers\/\d{4}-\d{2}-\d{2}\/[0-9a-f-]{36}\.json$/);
    expect(fresh.key).toMatch(/\.json\.gz$/);
    expect(stored.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(ANSWER_LINK_SECONDS * 1000);
    expect(await removeExpiredAnswers()).toBe(0);
    expect((await fetch(fresh.url)).status).toBe(200);

    testClock.advance(ANSWER_LINK_SECONDS + 1);

    // These two, and those the tests above stored.
    expect(await removeExpiredAnswers()).toBeGreaterThanOrEqual(2);
    expect((await fetch(stored.url)).status).toBe(403);
    expect((await fetch(fresh.url)).status).toBe(403);
  });
});
