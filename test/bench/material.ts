import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { routes } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { loadHandler } from '../../infra/local/router';
import { signAccessToken } from '../../lib/auth/jwt';
import { closeDb, useConnection } from '../../lib/db/client';
import type { RouteDefinition } from '../../lib/http/route';
import { freshBenchDatabase } from './fresh-database';

const EMAILS = Number(process.env.BENCH_EMAILS ?? 200_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const ORGANIZATIONS = Number(process.env.BENCH_ORGANIZATIONS ?? 1_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
/** The second network case, a tenth of MESSAGES: the search's p50 growth is their ratio. */
const SMALL_MESSAGES = Math.round(MESSAGES / 10);
/** Each message reads "About the <w1> and the <w2> number n": a two-word search matches 2%. */
const NETWORK_WORDS = [
  'contract',
  'settlement',
  'invoice',
  'deposition',
  'meeting',
  'witness',
  'evidence',
  'schedule',
  'lunch',
  'draft',
];

export interface LatencyResult {
  name: string;
  samples: number;
  p50Ms: number;
  p99Ms: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function measure(
  name: string,
  route: RouteDefinition,
  request: { url: string; path: Record<string, string>; token: string },
): Promise<LatencyResult> {
  const handler = await loadHandler(route);
  const call = async () => {
    const event = buildApiGatewayEvent(
      route,
      { method: route.method, url: request.url, headers: { authorization: `Bearer ${request.token}` } },
      request.path,
    );
    const result = await handler(event, buildLambdaContext(route));
    if ((result.statusCode ?? 500) !== 200) throw new Error(`${name}: ${result.statusCode} ${result.body}`);
    return result;
  };
  for (let i = 0; i < 10; i += 1) await call();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    name,
    samples: SAMPLES,
    p50Ms: Math.round(percentile(times, 50) * 100) / 100,
    p99Ms: Math.round(percentile(times, 99) * 100) / 100,
  };
}

/**
 * Seeds one case with EMAILS emails (one 5,000-email thread, the rest in threads of 20) and
 * MESSAGES professional-network messages, a second case with SMALL_MESSAGES of them, and
 * ORGANIZATIONS organizations with cases, codes, devices and attempts; then times, in-process
 * through the real handlers (one Postgres round trip path, no HTTP): a filtered page of the big
 * thread, the same full-text search in each network case, and the org report.
 */
export async function benchMaterial(
  adminUrl: string,
): Promise<{ seed: Record<string, number>; results: LatencyResult[]; searchP50Growth: number }> {
  const { url, connection } = await freshBenchDatabase(adminUrl, 'cebs_bench_material', 4);
  useConnection(connection);

  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const seedStarted = performance.now();
  const [user] =
    await sql`insert into users (id, email, name, password_hash, is_super_admin, created_at, updated_at) values (gen_random_uuid(), 'bench@example.com', 'Bench', 'x', true, now(), now()) returning id`;
  const [org] =
    await sql`insert into organizations (id, name, slug, email, created_at, updated_at) values (gen_random_uuid(), 'Bench Org', 'bench-org', 'bench@example.com', now(), now()) returning id`;
  await sql`insert into organization_members (organization_id, user_id, role, created_at, updated_at) values (${org!.id}, ${user!.id}, 'owner', now(), now())`;
  await sql`insert into organization_plans (id, organization_id, type, seats, devices, storage_bytes, created_at, updated_at) values (gen_random_uuid(), ${org!.id}, 'free', 5, 2, 5368709120, now(), now())`;
  const [legal] =
    await sql`insert into cases (id, organization_id, name, created_at, updated_at) values (gen_random_uuid(), ${org!.id}, 'Bench case', now(), now()) returning id`;
  await sql`insert into case_access (case_id, user_id, access, created_at, updated_at) values (${legal!.id}, ${user!.id}, 'owner', now(), now())`;
  const [tag] =
    await sql`insert into tags (id, organization_id, case_id, name, name_lowercase, created_at, updated_at) values (gen_random_uuid(), ${org!.id}, ${legal!.id}, 'Privileged', 'privileged', now(), now()) returning id`;

  const threadCount = 1 + Math.ceil((EMAILS - 5000) / 20);
  await sql`insert into email_threads (id, case_id, root_message_id, subject, message_count, created_at, updated_at)
    select gen_random_uuid(), ${legal!.id}, '<root-' || n || '@bench>', 'Thread ' || n, 0, now(), now() from generate_series(0, ${threadCount - 1}) n`;
  await sql`insert into emails (id, case_id, thread_id, grant_id, external_id, source_email, subject, body, snippet, object, date, "from", "to", cc, bcc, reply_to, folders, starred, unread, thread_index, participant_emails, participant_domains, created_at, updated_at)
    select gen_random_uuid(), ${legal!.id}, t.id, 'bench', '<m-' || n || '@bench>', 'ann@lee.example', 'Subject ' || n, 'Body of message ' || n, 'Body', 'message',
           now() - (n || ' minutes')::interval, '[{"email":"ann@lee.example"}]', json_build_array(json_build_object('email', 'p' || (n % 50) || '@d' || (n % 7) || '.example'))::jsonb, '[]', '[]', '[]',
           array[(array['INBOX','SENT','ARCHIVE'])[1 + n % 3]], n % 5 = 0, n % 3 = 0, 0,
           array['ann@lee.example', 'p' || (n % 50) || '@d' || (n % 7) || '.example'], array['lee.example', 'd' || (n % 7) || '.example'], now(), now()
    from generate_series(0, ${EMAILS - 1}) n
    join email_threads t on t.case_id = ${legal!.id} and t.root_message_id = '<root-' || (case when n < 5000 then 0 else 1 + (n - 5000) / 20 end) || '@bench>'`;
  await sql`insert into email_tags (id, email_id, tag_id, added_by, created_at, updated_at) select gen_random_uuid(), id, ${tag!.id}, 'user', now(), now() from emails where case_id = ${legal!.id} and external_id like '<m-%7@bench>'`;
  const [bigThread] =
    await sql`select id from email_threads where case_id = ${legal!.id} and root_message_id = '<root-0@bench>'`;

  // The network messages: the big case, and a second case a tenth its size in the same database
  // (same shape scaled down) so the search's growth is measured in the same run.
  const seedNetwork = async (caseId: string, messages: number) => {
    const conversations = Math.max(1, Math.round(messages / 100));
    const [profile] =
      await sql`insert into material_profiles (id, case_id, platform, external_id, name, created_at, updated_at) values (gen_random_uuid(), ${caseId}, 'professional_network', 'ann', 'Ann Lee', now(), now()) returning id`;
    await sql`insert into network_conversations (id, case_id, profile_id, external_id, title, participants, created_at, updated_at)
    select gen_random_uuid(), ${caseId}, ${profile!.id}, 'c' || n, 'Conversation ' || n, array['Ann Lee', 'Person ' || n], now(), now() from generate_series(0, ${conversations - 1}) n`;
    await sql`insert into network_messages (id, case_id, conversation_id, profile_id, external_id, "from", "to", date, subject, content, folder, is_draft, attachments, created_at, updated_at)
    select gen_random_uuid(), ${caseId}, c.id, ${profile!.id}, 'm' || n, 'Ann Lee', 'Person', now() - (n || ' seconds')::interval, null,
           'About the ' || (${NETWORK_WORDS}::text[])[1 + n % 10] || ' and the ' || (${NETWORK_WORDS}::text[])[1 + (n / 10) % 10] || ' number ' || n, 'INBOX', false, '', now(), now()
    from generate_series(0, ${messages - 1}) n
    join network_conversations c on c.case_id = ${caseId} and c.external_id = 'c' || (n % ${conversations})`;
  };
  await seedNetwork(legal!.id, MESSAGES);
  const [smallCase] =
    await sql`insert into cases (id, organization_id, name, created_at, updated_at) values (gen_random_uuid(), ${org!.id}, 'Bench case, small', now(), now()) returning id`;
  await sql`insert into case_access (case_id, user_id, access, created_at, updated_at) values (${smallCase!.id}, ${user!.id}, 'owner', now(), now())`;
  await seedNetwork(smallCase!.id, SMALL_MESSAGES);

  await sql`insert into organizations (id, name, slug, email, created_at, updated_at)
    select gen_random_uuid(), 'Firm ' || n, 'firm-' || n, 'firm' || n || '@example.com', now() - (n || ' days')::interval, now() from generate_series(1, ${ORGANIZATIONS}) n`;
  await sql`insert into organization_plans (id, organization_id, type, seats, devices, storage_bytes, created_at, updated_at) select gen_random_uuid(), id, 'free', 5, 2, 5368709120, now(), now() from organizations where slug like 'firm-%'`;
  await sql`insert into cases (id, organization_id, name, created_at, updated_at) select gen_random_uuid(), o.id, 'Case ' || n, now(), now() from organizations o, generate_series(1, 5) n where o.slug like 'firm-%'`;
  await sql`insert into extraction_codes (id, organization_id, code_hash, custodian_email, case_id, used_at, created_at, updated_at)
    select gen_random_uuid(), c.organization_id, md5(random()::text), 'custodian@example.com', c.id, case when random() < 0.5 then now() end, now(), now() from cases c join organizations o on o.id = c.organization_id where o.slug like 'firm-%'`;
  await sql`insert into devices (id, organization_id, device_id, device_type, created_at, updated_at) select gen_random_uuid(), id, 'dev-' || n, 'android', now(), now() from organizations, generate_series(1, 2) n where slug like 'firm-%'`;
  await sql`insert into extraction_attempts (id, organization_id, device_id, outcome, created_at, updated_at)
    select gen_random_uuid(), id, 'dev-' || (1 + n % 2), (array['success','failed','cancelled'])[1 + n % 3], now(), now() from organizations, generate_series(1, 6) n where slug like 'firm-%'`;
  await sql`analyze`;
  const seedSeconds = Math.round((performance.now() - seedStarted) / 1000);
  await sql.end();

  const { token } = await signAccessToken({ userId: user!.id, sessionId: '00000000-0000-7000-8000-000000000000' });
  // A real sign-in session for the token.
  const sessions = postgres(url, { max: 1, onnotice: () => {} });
  await sessions`insert into sessions (id, user_id, kind, token_hash, expires_at, created_at, updated_at) values ('00000000-0000-7000-8000-000000000000', ${user!.id}, 'login', 'bench', now() + interval '1 day', now(), now())`;
  await sessions.end();

  // The same search in each network case: the 1,000,000-message one and the 100,000-message one.
  const searchIn = (caseId: string, messages: number) =>
    measure(
      `network search "settlement contract", ${messages.toLocaleString('en-US')} messages`,
      routes.searchNetworkMessages,
      {
        url: `/professional-network/${caseId}/search-messages?searchText=settlement%20contract&perPage=20`,
        path: { caseId },
        token,
      },
    );
  const results = [
    await measure(
      'thread page, filtered (domains, excludeEmails, excludeTags, folders), 5,000-email thread',
      routes.listThreadEmails,
      {
        url: `/local-emails/${legal!.id}/threads/${bigThread!.id}/emails?domains=d3.example,d4.example&excludeEmails=p10@d3.example&excludeTags=${tag!.id}&folders=INBOX,SENT&page=3&perPage=20`,
        path: { caseId: legal!.id, threadId: bigThread!.id },
        token,
      },
    ),
    await searchIn(legal!.id, MESSAGES),
    await searchIn(smallCase!.id, SMALL_MESSAGES),
    await measure(
      `org report page of 10, ${ORGANIZATIONS.toLocaleString('en-US')} organizations`,
      routes.getOrganizationReport,
      {
        url: '/admin/report/org-report?page=2&perPage=10',
        path: {},
        token,
      },
    ),
  ];
  await closeDb();
  // Issue 19: p50 over MESSAGES ÷ p50 over SMALL_MESSAGES, both cases in one database, one run.
  const searchP50Growth = Math.round((results[1]!.p50Ms / results[2]!.p50Ms) * 100) / 100;
  return {
    seed: {
      emails: EMAILS,
      networkMessages: MESSAGES,
      smallCaseNetworkMessages: SMALL_MESSAGES,
      organizations: ORGANIZATIONS,
      seedSeconds,
    },
    results,
    searchP50Growth,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchMaterial(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  console.log(JSON.stringify(result, null, 2));
}
