import { performance } from 'node:perf_hooks';
import type postgres from 'postgres';

/**
 * Seeds the review part's case (review.ts) by SQL, in the bench database: emails in threads,
 * professional-network messages in conversations of four profiles, support tickets with comments
 * of three chat-platform profiles, device notes of five devices, and manual tag links on a share
 * of each kind. Everything is a pure function of each item's number `n` (per kind), so a case
 * grown from 100,000 to 1,000,000 items holds the same first 100,000 and the text's word
 * frequencies stay the same at every size.
 *
 * The text: 20,000 sentences made here from a seeded generator (about 230 real words with a
 * Zipf-like frequency, so a few words are in almost every item and most in few; a made-up
 * codename in 30% of sentences; the phrases "breach of contract" and "settlement agreement" in
 * 1.5% and 2% of them), each item taking 2 to 4 of them by a hash of its number, plus a reference
 * number of its own and, in 0.1% of items of each kind, "Project Kestrel" (the selective word).
 */

/** Share of the case's items per kind (the rest are device notes). */
export const KIND_SHARES = { emails: 0.4, networkMessages: 0.3, supportTickets: 0.15 } as const;
/** Emails 0..BIG_THREAD-1 are one thread (the thread-emails bench reads it); the rest are threads of 10. */
export const BIG_THREAD = 5_000;
const THREAD_SIZE = 10;
/** Network messages per conversation. */
const CONVERSATION_SIZE = 50;
const SENTENCES = 20_000;
const PEOPLE = 2_400;
/** Rows a statement inserts at most. */
const CHUNK = 50_000;

export interface KindCounts {
  emails: number;
  networkMessages: number;
  supportTickets: number;
  deviceNotes: number;
}

export function kindCounts(items: number): KindCounts {
  const emails = Math.floor(items * KIND_SHARES.emails);
  const networkMessages = Math.floor(items * KIND_SHARES.networkMessages);
  const supportTickets = Math.floor(items * KIND_SHARES.supportTickets);
  return { emails, networkMessages, supportTickets, deviceNotes: items - emails - networkMessages - supportTickets };
}

/**
 * The manual tags of the bench (case tags, inserted by SQL). `share` is the per-mille of items of
 * the listed kinds that carry the tag; `removed` rows are history (an add later removed): "Needs
 * follow-up" is active on 1% of items, each of which also has an earlier link that was removed
 * (added, removed, added again), and was removed from another 1%.
 */
export const BENCH_TAGS = {
  responsive: { name: 'Responsive', side: 'org' },
  privileged: { name: 'Privileged', side: 'org' },
  hot: { name: 'Hot', side: 'org' },
  followUp: { name: 'Needs follow-up', side: 'org' },
  /** Opposing counsel's own tag, on emails only (the one kind it sees in full). */
  opposingKey: { name: 'Key document', side: 'opposing_council' },
  /** Untouched by the seed: the 1,000-item tagging requests add and remove it. */
  tagging: { name: 'Bench tagging', side: 'org' },
} as const;
export type BenchTag = keyof typeof BENCH_TAGS;

const KINDS = ['email', 'network-conversation', 'support-ticket', 'device-note'] as const;
type LinkKind = (typeof KINDS)[number];
const LINK_RULES: Array<{ tag: BenchTag; salt: number; lo: number; hi: number; removed: boolean; kinds: LinkKind[] }> =
  [
    { tag: 'responsive', salt: 31, lo: 0, hi: 100, removed: false, kinds: [...KINDS] },
    { tag: 'privileged', salt: 32, lo: 0, hi: 30, removed: false, kinds: [...KINDS] },
    { tag: 'hot', salt: 33, lo: 0, hi: 5, removed: false, kinds: [...KINDS] },
    { tag: 'followUp', salt: 34, lo: 0, hi: 10, removed: false, kinds: [...KINDS] },
    { tag: 'followUp', salt: 34, lo: 0, hi: 20, removed: true, kinds: [...KINDS] },
    { tag: 'opposingKey', salt: 35, lo: 0, hi: 20, removed: false, kinds: ['email'] },
  ];

/** Ordered by frequency: rank r is picked with probability about ln((r+1)/r) / ln(V+1). */
const VOCABULARY = (
  'the to of and a in for is on that we with this be you it as at by from are have will please our ' +
  'can not was re your an or if all would about meeting call team email attached see us they has ' +
  'been which also thanks any one more week there time review know let contract new regarding ' +
  'update draft today following client need should could discuss report issue project information ' +
  'documents sent received before after next payment schedule agreement settlement account matter ' +
  'question file notes office confirm deadline changes terms final signed copy record invoice ' +
  'request response provide comments counsel legal court hearing filing motion party parties ' +
  'claim claims damages evidence witness statement deposition depositions deposit deposited depose ' +
  'exhibit exhibits discovery production privileged confidential notice letter memo summary ' +
  'analysis budget quarter revenue shipment delivery order purchase vendor supplier pricing ' +
  'warranty defect complaint customer service support ticket refund replacement shipping ' +
  'inventory audit compliance policy procedure training safety incident investigation board ' +
  'approval budget forecast plan strategy proposal negotiation offer counteroffer release ' +
  'indemnity liability breach termination renewal amendment addendum clause section exhibit ' +
  'schedule appendix attorney paralegal associate partner judge mediator arbitration mediation ' +
  'subpoena affidavit declaration transcript testimony objection ruling order stipulation ' +
  'continuance trial verdict appeal judgment lien escrow wire transfer bank statement ledger ' +
  'reconciliation spreadsheet presentation slides agenda minutes calendar travel expense ' +
  'reimbursement lunch dinner conference flight hotel weekend holiday'
)
  .split(' ')
  .filter((word, i, all) => all.indexOf(word) === i);
const SYLLABLES = [
  'ka',
  'lo',
  'ri',
  'mu',
  'ten',
  'zor',
  'vel',
  'an',
  'dri',
  'pol',
  'sem',
  'tu',
  'gar',
  'nix',
  'ob',
  'quel',
  'bra',
  'fen',
  'hol',
  'yst',
];
const FIRST = [
  'anna',
  'ben',
  'carla',
  'david',
  'elena',
  'farid',
  'grace',
  'hugo',
  'ines',
  'jon',
  'kira',
  'liam',
  'maya',
  'nils',
  'olga',
  'pavel',
  'quinn',
  'rosa',
  'sami',
  'tara',
  'umar',
  'vera',
  'will',
  'xena',
  'yuri',
  'zoe',
  'amir',
  'bea',
  'chen',
  'dana',
  'emil',
  'fay',
  'gil',
  'hana',
  'ivan',
  'jade',
  'kofi',
  'lena',
  'marc',
  'nora',
  'omar',
  'pia',
  'ravi',
  'sara',
  'tom',
  'ula',
  'vik',
  'wen',
  'yara',
  'zack',
  'aiko',
  'bruno',
  'cleo',
  'dev',
  'ezra',
  'freya',
  'gus',
  'hiro',
  'isla',
  'joel',
];
const LAST = [
  'lee',
  'novak',
  'garcia',
  'okafor',
  'schmidt',
  'rossi',
  'tanaka',
  'kowalski',
  'silva',
  'haddad',
  'murphy',
  'larsen',
  'dubois',
  'ivanova',
  'patel',
  'kim',
  'nguyen',
  'moreau',
  'fischer',
  'costa',
  'berg',
  'walsh',
  'reyes',
  'ahmed',
  'weber',
  'bianchi',
  'sato',
  'olsen',
  'petrov',
  'mendez',
  'hughes',
  'brandt',
  'lopez',
  'yilmaz',
  'kaur',
  'ortiz',
  'mayer',
  'conti',
  'ito',
  'halvorsen',
];
/** Participants' domains: the firm, opposing counsel, the client and others. */
const DOMAINS = [
  'harlowreed.com',
  'brightlinelaw.com',
  'acmeindustrial.com',
  'northwindtraders.com',
  'globexlogistics.com',
  'initech.io',
  'umbrellafinance.com',
  'gmail.com',
  'outlook.com',
  'starkenergy.com',
  'wayneholdings.com',
  'yahoo.com',
];

/** mulberry32: the same sentences on every run. */
function generator(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentences(): string[] {
  const random = generator(34);
  const word = () => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor((VOCABULARY.length + 1) ** random()) - 1)]!;
  const codename = () => {
    const k = Math.floor(random() * 8000);
    return SYLLABLES[k % 20]! + SYLLABLES[Math.floor(k / 20) % 20]! + SYLLABLES[Math.floor(k / 400) % 20]!;
  };
  const out: string[] = [];
  for (let i = 0; i < SENTENCES; i += 1) {
    const words = Array.from({ length: 6 + Math.floor(random() * 9) }, word);
    const insert = (text: string) => words.splice(Math.floor(random() * words.length), 0, text);
    if (random() < 0.3) insert(codename());
    if (random() < 0.015) insert('breach of contract');
    if (random() < 0.02) insert('settlement agreement');
    const text = words.join(' ');
    out.push(`${text[0]!.toUpperCase()}${text.slice(1)}.`);
  }
  return out;
}

export interface ReviewSeedContext {
  sql: postgres.Sql;
  organizationId: string;
  userId: string;
  caseId: string;
  tags: Record<BenchTag, string>;
  /** Professional-network profiles (4, two visible to opposing counsel) and chat-platform ones (3, one visible). */
  networkProfiles: string[];
  chatProfiles: string[];
  devices: string[];
}

/**
 * Session helpers (the connection must be a single one, `max: 1`: temporary tables and
 * functions are per session): a hash of an item's number, the sentences and the people.
 */
export async function prepareSeeding(sql: postgres.Sql): Promise<void> {
  await sql`set synchronous_commit = off`;
  await sql`set maintenance_work_mem = '256MB'`;
  await sql`set work_mem = '64MB'`;
  await sql.unsafe(`create or replace function pg_temp.h(n bigint, salt int, m int) returns int language sql immutable parallel safe
    as $$ select ((hashint8(n * 1009 + salt)::bigint + 2147483648) % m)::int $$`);
  await sql`create temp table if not exists bench_sentences (id int primary key, s text not null)`;
  await sql`truncate bench_sentences`;
  const all = sentences();
  await sql`insert into bench_sentences select * from unnest(${all.map((_, i) => i)}::int[], ${all}::text[])`;
  await sql`create temp table if not exists bench_people (p int primary key, name text not null, email text not null, domain text not null)`;
  await sql`truncate bench_people`;
  const people = Array.from({ length: PEOPLE }, (_, p) => {
    const first = FIRST[p % FIRST.length]!;
    const last = LAST[Math.floor(p / FIRST.length) % LAST.length]!;
    const domain = DOMAINS[p % DOMAINS.length]!;
    const title = (s: string) => s[0]!.toUpperCase() + s.slice(1);
    return { name: `${title(first)} ${title(last)}`, email: `${first}.${last}@${domain}`, domain };
  });
  await sql`insert into bench_people select * from unnest(${people.map((_, p) => p)}::int[], ${people.map((x) => x.name)}::text[], ${people.map((x) => x.email)}::text[], ${people.map((x) => x.domain)}::text[])`;
  await sql`analyze bench_sentences`;
  await sql`analyze bench_people`;
}

/** The case's tags, profiles and devices, by SQL. Tags: type 'case', of the bench user's organization and case. */
export async function seedCaseFixtures(
  sql: postgres.Sql,
  ids: { organizationId: string; userId: string; caseId: string },
): Promise<ReviewSeedContext> {
  const { organizationId, userId, caseId } = ids;
  const tags = {} as Record<BenchTag, string>;
  for (const [key, tag] of Object.entries(BENCH_TAGS) as Array<[BenchTag, (typeof BENCH_TAGS)[BenchTag]]>) {
    const [row] = await sql<{ id: string }[]>`
      insert into tags (id, organization_id, case_id, name, name_lowercase, type, severity, origin, creator_access_type, created_by_id, is_active, created_at, updated_at)
      values (gen_random_uuid(), ${organizationId}, ${caseId}, ${tag.name}, ${tag.name.toLowerCase()}, 'case', 'info', 'manual', ${tag.side}, ${userId}, true, now(), now())
      returning id`;
    tags[key] = row!.id;
  }
  const profiles = async (platform: string, count: number, visible: number) =>
    (
      await sql<{ id: string }[]>`
        insert into material_profiles (id, case_id, platform, external_id, name, visible_to_opposing_counsel, created_at, updated_at)
        select gen_random_uuid(), ${caseId}, ${platform}, ${platform} || '-' || k, 'Profile ' || k, k <= ${visible}, now(), now()
        from generate_series(1, ${count}) k order by k returning id`
    ).map((r) => r.id);
  const networkProfiles = await profiles('professional_network', 4, 2);
  const chatProfiles = await profiles('chat_platform', 3, 1);
  const devices = (
    await sql<{ id: string }[]>`
      insert into devices (id, organization_id, device_id, device_type, created_at, updated_at)
      select gen_random_uuid(), ${organizationId}, 'review-bench-device-' || k, (array['android', 'ios'])[1 + k % 2], now(), now()
      from generate_series(1, 5) k order by k returning id`
  ).map((r) => r.id);
  return { sql, organizationId, userId, caseId, tags, networkProfiles, chatProfiles, devices };
}

/** The tag links of `kind` for the rows `ins` (id, n) of a data-modifying CTE. */
function linkRules(ctx: ReviewSeedContext, kind: LinkKind) {
  const rules = LINK_RULES.filter((rule) => rule.kinds.includes(kind));
  return {
    tagIds: rules.map((r) => ctx.tags[r.tag]),
    salts: rules.map((r) => r.salt),
    lo: rules.map((r) => r.lo),
    hi: rules.map((r) => r.hi),
    removed: rules.map((r) => r.removed),
  };
}

const TAG_LINK_SELECT = (table: string, itemColumn: string) => `
  insert into ${table} (id, ${itemColumn}, tag_id, added_by, added_by_id, removed_at, removed_by, removed_by_id, created_at, updated_at)
  select gen_random_uuid(), ins.id, r.tag_id, 'user', $U::text, case when r.removed then now() - interval '2 days' end,
         case when r.removed then 'user' end, case when r.removed then $U::text end,
         now() - interval '3 days' + case when r.removed then interval '0' else interval '2 days' end, now()
  from ins
  join unnest($T::uuid[], $S::int[], $L::int[], $H::int[], $R::boolean[]) as r(tag_id, salt, lo, hi, removed)
    on pg_temp.h(ins.n, r.salt, 1000) >= r.lo and pg_temp.h(ins.n, r.salt, 1000) < r.hi`;

/** `$T`… placeholders of TAG_LINK_SELECT replaced by numbered parameters after `first`. */
function withLinkParams(text: string, first: number): string {
  return text
    .replaceAll('$U', `$${first}`)
    .replaceAll('$T', `$${first + 1}`)
    .replaceAll('$S', `$${first + 2}`)
    .replaceAll('$L', `$${first + 3}`)
    .replaceAll('$H', `$${first + 4}`)
    .replaceAll('$R', `$${first + 5}`);
}

/** An array parameter as PostgreSQL's array text (`{a,b}`), cast in the statement: uuids, numbers and booleans only. */
const arrayText = (values: ReadonlyArray<string | number | boolean>) => `{${values.join(',')}}`;

/** The parameters of TAG_LINK_SELECT; with `links` false, no rule: the items get no tag. */
function linkParams(ctx: ReviewSeedContext, kind: LinkKind, links = true) {
  const r = linkRules(ctx, kind);
  const lists = links ? [r.tagIds, r.salts, r.lo, r.hi, r.removed] : [[], [], [], [], []];
  return [ctx.userId, ...lists.map(arrayText)];
}

async function inChunks(from: number, to: number, run: (a: number, b: number) => Promise<unknown>) {
  for (let a = from; a < to; a += CHUNK) await run(a, Math.min(to, a + CHUNK));
}

/** The thread of email n: 0 for the big thread, else 1 + its thread of 10 (its root is `<t{key}@review.bench>`). */
export const threadKey = (n: number) => (n < BIG_THREAD ? 0 : 1 + Math.floor((n - BIG_THREAD) / THREAD_SIZE));
const THREAD_KEY_SQL = `(case when n < ${BIG_THREAD} then 0 else 1 + (n - ${BIG_THREAD}) / ${THREAD_SIZE} end)`;
/** Dates over three years from 2023-01-01, by a hash of `key`. */
const DATE_SQL = (key: string, salt: number) =>
  `(timestamptz '2023-01-01 00:00:00+00' + make_interval(secs => pg_temp.h(${key}, ${salt}, 94608000)))`;

/**
 * Emails n in [from, to) of the case (threads made as needed), with their tag links; `caseId` and
 * `links: false` seed another case's emails, untagged (the bench's tags are the main case's).
 */
export async function seedEmails(
  ctx: ReviewSeedContext,
  from: number,
  to: number,
  { caseId = ctx.caseId, links = true }: { caseId?: string; links?: boolean } = {},
) {
  const { sql } = ctx;
  if (to <= from) return;
  await sql.unsafe(
    `insert into email_threads (id, case_id, root_message_id, subject, participants, message_count, created_at, updated_at)
     select gen_random_uuid(), $1, '<t' || k || '@review.bench>', s.s, '{}', 0, now(), now()
     from generate_series($2::int, $3::int) k join bench_sentences s on s.id = pg_temp.h(k, 7, ${SENTENCES})
     on conflict (case_id, root_message_id) do nothing`,
    [caseId, threadKey(from), threadKey(to - 1)],
  );
  await inChunks(from, to, (a, b) =>
    sql.unsafe(
      `with ins as (
        insert into emails (id, case_id, thread_id, grant_id, external_id, source_email, subject, body, snippet, object, date,
                            "from", "to", cc, bcc, reply_to, folders, starred, unread, thread_index, participant_emails, participant_domains, created_at, updated_at)
        select gen_random_uuid(), $1, t.id, 'review-bench', '<e' || n || '@review.bench>', pf.email,
               case when n % ${THREAD_SIZE} = 0 then '' else 'Re: ' end || t.subject,
               x.body, left(x.body, 160), 'message',
               ${DATE_SQL('tk', 21)} + make_interval(mins => 37 * (case when n < ${BIG_THREAD} then n else (n - ${BIG_THREAD}) % ${THREAD_SIZE} end)),
               jsonb_build_array(jsonb_build_object('name', pf.name, 'email', pf.email)),
               jsonb_build_array(jsonb_build_object('name', pt.name, 'email', pt.email)),
               case when pc.p is null then '[]'::jsonb else jsonb_build_array(jsonb_build_object('name', pc.name, 'email', pc.email)) end,
               '[]', '[]',
               array[(array['INBOX', 'SENT', 'ARCHIVE', 'INBOX'])[1 + n % 4]], n % 17 = 0, n % 5 = 0,
               case when n < ${BIG_THREAD} then n else (n - ${BIG_THREAD}) % ${THREAD_SIZE} end,
               array_remove(array[pf.email, pt.email, pc.email], null),
               array(select distinct d from unnest(array[pf.domain, pt.domain, pc.domain]) d where d is not null),
               now(), now()
        from generate_series($2::int, $3::int - 1) n
        cross join lateral (select ${THREAD_KEY_SQL} as tk) k
        join email_threads t on t.case_id = $1 and t.root_message_id = '<t' || k.tk || '@review.bench>'
        join bench_people pf on pf.p = pg_temp.h(n, 11, ${PEOPLE})
        join bench_people pt on pt.p = pg_temp.h(n, 12, ${PEOPLE})
        left join bench_people pc on n % 3 = 0 and pc.p = pg_temp.h(n, 13, ${PEOPLE})
        join bench_sentences s1 on s1.id = pg_temp.h(n, 1, ${SENTENCES})
        join bench_sentences s2 on s2.id = pg_temp.h(n, 2, ${SENTENCES})
        join bench_sentences s3 on s3.id = pg_temp.h(n, 3, ${SENTENCES})
        join bench_sentences s4 on s4.id = pg_temp.h(n, 4, ${SENTENCES})
        cross join lateral (select 'Hi ' || split_part(pt.name, ' ', 1) || ', ' || s1.s || ' ' || s2.s || ' ' || s3.s
                 || case when n % 2 = 0 then ' ' || s4.s else '' end
                 || case when n % 1000 = 1 then ' Project Kestrel is on the agenda.' else '' end
                 || ' Ref ' || n || '. Regards, ' || split_part(pf.name, ' ', 1) as body) x
        returning id, split_part(substr(external_id, 3), '@', 1)::bigint as n
      )
      ${withLinkParams(TAG_LINK_SELECT('email_tags', 'email_id'), 4)}`,
      [caseId, a, b, ...linkParams(ctx, 'email', links)] as string[],
    ),
  );
}

/** Network messages n in [from, to), conversations of 50 over four profiles, with the conversations' tag links. */
export async function seedNetworkMessages(ctx: ReviewSeedContext, from: number, to: number) {
  const { sql, caseId } = ctx;
  if (to <= from) return;
  const first = Math.floor(from / CONVERSATION_SIZE);
  const last = Math.floor((to - 1) / CONVERSATION_SIZE);
  // The conversations this range starts (the first may already exist), with their tag links.
  await sql.unsafe(
    `with ins as (
      insert into network_conversations (id, case_id, profile_id, external_id, title, participants, created_at, updated_at)
      select gen_random_uuid(), $1, ($2::uuid[])[1 + k % 4], 'c' || k, 'Conversation with ' || pa.name,
             array[pa.name, pb.name] || case when k % 4 = 0 then array[pc.name] else '{}'::text[] end, now(), now()
      from generate_series($3::int, $4::int) k
      join bench_people pa on pa.p = pg_temp.h(k, 41, ${PEOPLE})
      join bench_people pb on pb.p = pg_temp.h(k, 42, ${PEOPLE})
      join bench_people pc on pc.p = pg_temp.h(k, 43, ${PEOPLE})
      on conflict (profile_id, external_id) do nothing
      returning id, substr(external_id, 2)::bigint as n
    )
    ${withLinkParams(TAG_LINK_SELECT('network_conversation_tags', 'conversation_id'), 5)}`,
    [caseId, arrayText(ctx.networkProfiles), first, last, ...linkParams(ctx, 'network-conversation')] as string[],
  );
  await inChunks(from, to, (a, b) =>
    sql.unsafe(
      `insert into network_messages (id, case_id, conversation_id, profile_id, external_id, "from", "to", date, subject, content, folder, is_draft, attachments, created_at, updated_at)
       select gen_random_uuid(), $1, c.id, c.profile_id, 'm' || n, c.participants[1 + n % 2], c.participants[2 - n % 2],
              ${DATE_SQL(`n / ${CONVERSATION_SIZE}`, 44)} + make_interval(mins => 11 * (n % ${CONVERSATION_SIZE})),
              case when n % ${CONVERSATION_SIZE} = 0 then s3.s end,
              s1.s || case when n % 3 = 0 then ' ' || s2.s else '' end
                || case when n % 1000 = 1 then ' About Project Kestrel.' else '' end || ' Ref ' || n || '.',
              'INBOX', false, '', now(), now()
       from generate_series($2::int, $3::int - 1) n
       join network_conversations c on c.case_id = $1 and c.external_id = 'c' || (n / ${CONVERSATION_SIZE})
       join bench_sentences s1 on s1.id = pg_temp.h(n, 51, ${SENTENCES})
       join bench_sentences s2 on s2.id = pg_temp.h(n, 52, ${SENTENCES})
       join bench_sentences s3 on s3.id = pg_temp.h(n, 53, ${SENTENCES})`,
      [caseId, a, b],
    ),
  );
}

/** Support tickets n in [from, to) over three chat-platform profiles, two or three comments each, with tag links. */
export async function seedSupportTickets(ctx: ReviewSeedContext, from: number, to: number) {
  const { sql, caseId } = ctx;
  if (to <= from) return;
  const comment = (person: string, sentence: string, minutes: number) =>
    `jsonb_build_object('author', ${person}.name, 'comment', ${sentence}, 'createdAt', to_char((${DATE_SQL('n', 61)} + make_interval(mins => ${minutes})) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))`;
  await inChunks(from, to, (a, b) =>
    sql.unsafe(
      `with ins as (
        insert into support_tickets (id, case_id, profile_id, ticket_id, subject, status, ticket_created_at, comments, created_at, updated_at)
        select gen_random_uuid(), $1, ($2::uuid[])[1 + n % 3], n, s1.s, (array['open', 'pending', 'solved', 'closed'])[1 + n % 4], ${DATE_SQL('n', 61)},
               jsonb_build_array(
                 ${comment('pa', `s2.s || case when n % 1000 = 1 then ' Project Kestrel.' else '' end || ' Ref ' || n || '.'`, 0)},
                 ${comment('pb', 's3.s', 90)}
               ) || case when n % 2 = 0 then jsonb_build_array(${comment('pa', 's4.s', 200)}) else '[]'::jsonb end,
               now(), now()
        from generate_series($3::int, $4::int - 1) n
        join bench_people pa on pa.p = pg_temp.h(n, 62, ${PEOPLE})
        join bench_people pb on pb.p = pg_temp.h(n, 63, ${PEOPLE})
        join bench_sentences s1 on s1.id = pg_temp.h(n, 64, ${SENTENCES})
        join bench_sentences s2 on s2.id = pg_temp.h(n, 65, ${SENTENCES})
        join bench_sentences s3 on s3.id = pg_temp.h(n, 66, ${SENTENCES})
        join bench_sentences s4 on s4.id = pg_temp.h(n, 67, ${SENTENCES})
        returning id, ticket_id as n
      )
      ${withLinkParams(TAG_LINK_SELECT('support_ticket_tags', 'ticket_id'), 5)}`,
      [caseId, arrayText(ctx.chatProfiles), a, b, ...linkParams(ctx, 'support-ticket')] as string[],
    ),
  );
}

/** Device notes n in [from, to) over five devices (title, summary, HTML content), with tag links. */
export async function seedDeviceNotes(ctx: ReviewSeedContext, from: number, to: number) {
  const { sql, caseId } = ctx;
  if (to <= from) return;
  await inChunks(from, to, (a, b) =>
    sql.unsafe(
      `with ins as (
        insert into device_notes (id, case_id, device_id, note_id, title, summary, note_created_at, note_modified_at, html_content, metadata, attachment_keys, created_at, updated_at)
        select gen_random_uuid(), $1, ($2::uuid[])[1 + n % 5], n, left(s1.s, 60), s2.s,
               to_char(${DATE_SQL('n', 71)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
               to_char((${DATE_SQL('n', 71)} + interval '2 hours') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
               '<div><p>' || s3.s || '</p><p>' || s4.s || '</p>'
                 || case when n % 1000 = 1 then '<p>Project <b>Kestrel</b> notes.</p>' else '' end || '<p>Ref ' || n || '</p></div>',
               '{}', '{}', now(), now()
        from generate_series($3::int, $4::int - 1) n
        join bench_sentences s1 on s1.id = pg_temp.h(n, 72, ${SENTENCES})
        join bench_sentences s2 on s2.id = pg_temp.h(n, 73, ${SENTENCES})
        join bench_sentences s3 on s3.id = pg_temp.h(n, 74, ${SENTENCES})
        join bench_sentences s4 on s4.id = pg_temp.h(n, 75, ${SENTENCES})
        returning id, note_id as n
      )
      ${withLinkParams(TAG_LINK_SELECT('device_note_tags', 'note_id'), 5)}`,
      [caseId, arrayText(ctx.devices), a, b, ...linkParams(ctx, 'device-note')] as string[],
    ),
  );
}

/** The case grown from `from` items to `to` items, every kind by its share; milliseconds per kind. */
export async function growCase(ctx: ReviewSeedContext, from: number, to: number) {
  const a = kindCounts(from);
  const b = kindCounts(to);
  const timed = async (seed: () => Promise<unknown>) => {
    const started = performance.now();
    await seed();
    return performance.now() - started;
  };
  return {
    emails: await timed(() => seedEmails(ctx, a.emails, b.emails)),
    networkMessages: await timed(() => seedNetworkMessages(ctx, a.networkMessages, b.networkMessages)),
    supportTickets: await timed(() => seedSupportTickets(ctx, a.supportTickets, b.supportTickets)),
    deviceNotes: await timed(() => seedDeviceNotes(ctx, a.deviceNotes, b.deviceNotes)),
  };
}

const SEEDED_TABLES = [
  'email_threads',
  'emails',
  'email_tags',
  'network_conversations',
  'network_messages',
  'network_conversation_tags',
  'support_tickets',
  'support_ticket_tags',
  'device_notes',
  'device_note_tags',
];

/** VACUUM (ANALYZE) of the seeded tables: statistics, the visibility map and GIN pending lists, as autovacuum leaves them. */
export async function settle(sql: postgres.Sql): Promise<number> {
  const started = performance.now();
  for (const table of SEEDED_TABLES) await sql.unsafe(`vacuum (analyze) ${table}`);
  return performance.now() - started;
}
