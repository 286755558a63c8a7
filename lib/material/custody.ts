import { and, asc, desc, eq, gt, lte, notLike, type SQL, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type * as z from 'zod/mini';
import {
  CUSTODY_DEFAULT_PER_PAGE,
  CUSTODY_ITEM_KINDS,
  type CaseCustodyQuery,
  type CustodyItemEntity,
} from '../../schemas/material/custody';
import { GENESIS_HASH } from '../audit/chain';
import { auditEventEntity } from '../audit/list';
import type { CaseContext } from '../cases/context';
import { addSeconds, now } from '../clock';
import { db, type Executor, type Tx } from '../db/client';
import { rawRows } from '../db/raw-rows';
import { auditChainHeads, auditEvents, auditReadCounts, evidenceObjects } from '../db/schema/audit';
import { devices } from '../db/schema/cases';
import {
  attachments,
  deviceNotes,
  emails,
  evidenceImports,
  networkMessages,
  supportTickets,
} from '../db/schema/material';
import { objectStorage } from '../storage/configured-storage';
import { generatedDocument } from '../storage/generated-documents';
import { CustodyTooLargeError, InvalidCursorError } from './errors';

/** How long the PDF's download link works, as for the billing report. */
export const CUSTODY_LINK_SECONDS = 15 * 60;
/**
 * The most items and events (together) `?format=pdf` renders in the request (about 1 s and 40 MB);
 * a bigger case's PDF is a background export (POST /cases/{caseId}/custody/exports).
 */
export const CUSTODY_PDF_AT_ONCE_MAX = 20_000;
/** The limits in force (the tests lower them to exercise big cases with few rows). */
export const custodyLimits = { pdfAtOnceMax: CUSTODY_PDF_AT_ONCE_MAX, volumeWeight: 200_000 };

export type CustodyItemKind = z.output<typeof CustodyItemEntity>['kind'];
export type CustodyItem = z.output<typeof CustodyItemEntity>;
export type CustodyEvent = ReturnType<typeof auditEventEntity>;
export interface ChainHead {
  sequence: number;
  hash: string;
}
export interface CaseCustody {
  caseId: string;
  generatedAt: string;
  items: CustodyItem[];
  events: CustodyEvent[];
  chainHead: ChainHead;
}

/**
 * A position in the items' order (kind, then import time and id; an attachment by its email's
 * time and id, then its own id). `at` is PostgreSQL's own text of the timestamp, to the
 * microsecond, so a position never falls between two rows a millisecond apart.
 */
export interface ItemPosition {
  kind: number;
  at: string;
  id: string;
  sub: string;
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function decode(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const POSITION_ID = /^[\x20-\x7e]{0,300}$/;

export function itemCursor(position: ItemPosition): string {
  return encode([position.kind, position.at, position.id, position.sub]);
}

/** The position an `itemsCursor` names; a cursor no answer gave is 400 naming the parameter. */
export function itemPositionOf(cursor: string): ItemPosition {
  const value = decode(cursor);
  if (
    Array.isArray(value) &&
    value.length === 4 &&
    Number.isInteger(value[0]) &&
    value[0] >= 0 &&
    value[0] < CUSTODY_ITEM_KINDS.length &&
    typeof value[1] === 'string' &&
    TIMESTAMP_TEXT.test(value[1]) &&
    typeof value[2] === 'string' &&
    POSITION_ID.test(value[2]) &&
    typeof value[3] === 'string' &&
    POSITION_ID.test(value[3])
  )
    return { kind: value[0], at: value[1], id: value[2], sub: value[3] };
  throw new InvalidCursorError('itemsCursor');
}

export const eventCursor = (sequence: number) => encode([sequence]);

/** The sequence an `eventsCursor` names: the page lists the events after it. */
export function eventSequenceOf(cursor: string): number {
  const value = decode(cursor);
  if (Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0]) && value[0] >= 0) return value[0];
  throw new InvalidCursorError('eventsCursor');
}

/** A timestamp as PostgreSQL's microsecond text in UTC: what a position carries. */
const positionAt = (column: SQL | unknown) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;
const atOf = (text: string) => sql`(${text}::timestamp at time zone 'UTC')`;

interface ItemRow {
  kind: number;
  id: string;
  sha256: string | null;
  size_bytes: string | number | null;
  source: string | null;
  imported_at: string | Date;
  imported_by: string | null;
  p_at: string;
  p_id: string;
  p_sub: string;
}

/**
 * One branch of the items query per kind, each its own ordered, limited index scan from the
 * position on: `after` is the position within this kind (null: from its first item), `asOf`
 * leaves out items imported after it (an export's snapshot).
 */
function kindBranch(
  kind: CustodyItemKind,
  caseId: string,
  after: ItemPosition | null,
  limit: number,
  asOf: Date | null,
) {
  const k = CUSTODY_ITEM_KINDS.indexOf(kind);
  const until = (column: unknown) => (asOf ? sql` and ${column} <= ${asOf.toISOString()}::timestamptz` : sql``);
  const imported = (table: typeof emails | typeof networkMessages | typeof supportTickets) => sql`
    select ${k}::int as kind, ${table.id}::text as id, ${table.sha256} as sha256, ${table.sizeBytes} as size_bytes,
           ${table.importSource} as source, ${table.createdAt} as imported_at, ${table.importedById}::text as imported_by,
           ${positionAt(table.createdAt)} as p_at, ${table.id}::text as p_id, '' as p_sub
    from ${table}
    where ${table.caseId} = ${caseId}
      ${after ? sql`and (${table.createdAt}, ${table.id}) > (${atOf(after.at)}, ${after.id}::uuid)` : sql``}
      ${until(table.createdAt)}
    order by ${table.createdAt}, ${table.id} limit ${limit}`;
  switch (kind) {
    case 'email':
      return imported(emails);
    case 'network_message':
      return imported(networkMessages);
    case 'support_ticket':
      return imported(supportTickets);
    // An attachment's hash is on its row; attachments stored before that have it on their object only.
    // Ordered by their email's position (the email index), then their own id.
    case 'attachment':
      return sql`
        select ${k}::int as kind, ${attachments.id}::text as id,
               coalesce(${attachments.sha256}, ${evidenceObjects.sha256}) as sha256, ${attachments.size} as size_bytes,
               ${emails.importSource} as source, ${attachments.createdAt} as imported_at,
               ${emails.importedById}::text as imported_by, ${positionAt(emails.createdAt)} as p_at,
               ${emails.id}::text as p_id, ${attachments.id}::text as p_sub
        from ${emails}
        join ${attachments} on ${attachments.emailId} = ${emails.id}
        left join ${evidenceObjects} on ${evidenceObjects.key} = ${attachments.providerId}
        where ${emails.caseId} = ${caseId}
          ${
            after
              ? sql`and (${emails.createdAt}, ${emails.id}, ${attachments.id}) > (${atOf(after.at)}, ${after.id}::uuid, ${after.sub}::uuid)`
              : sql``
          }
          ${until(attachments.createdAt)}
        order by ${emails.createdAt}, ${emails.id}, ${attachments.id} limit ${limit}`;
    case 'device_note':
      return sql`
        select ${k}::int as kind, ${deviceNotes.id}::text as id, ${deviceNotes.sha256} as sha256,
               ${deviceNotes.sizeBytes} as size_bytes,
               ${devices.deviceId} || ' (' || ${devices.deviceType} || ')' as source,
               ${deviceNotes.createdAt} as imported_at, ${deviceNotes.importedById}::text as imported_by,
               ${positionAt(deviceNotes.createdAt)} as p_at, ${deviceNotes.id}::text as p_id, '' as p_sub
        from ${deviceNotes}
        join ${devices} on ${devices.id} = ${deviceNotes.deviceId}
        where ${deviceNotes.caseId} = ${caseId}
          ${after ? sql`and (${deviceNotes.createdAt}, ${deviceNotes.id}) > (${atOf(after.at)}, ${after.id}::uuid)` : sql``}
          ${until(deviceNotes.createdAt)}
        order by ${deviceNotes.createdAt}, ${deviceNotes.id} limit ${limit}`;
    // One item per object key the case's notes link, imported with the first note that linked it,
    // with the hash and size recorded for the object; keys compare byte-wise (collate "C").
    case 'note_attachment':
      return sql`
        select ${k}::int as kind, first.key as id, ${evidenceObjects.sha256} as sha256,
               ${evidenceObjects.sizeBytes} as size_bytes, first.source as source, first.created_at as imported_at,
               first.imported_by as imported_by, ${positionAt(sql`first.created_at`)} as p_at, first.key as p_id,
               '' as p_sub
        from (
          select distinct on (linked.key) linked.key collate "C" as key, ${deviceNotes.createdAt} as created_at,
                 ${deviceNotes.importedById}::text as imported_by,
                 ${devices.deviceId} || ' (' || ${devices.deviceType} || ')' as source
          from ${deviceNotes}
          join ${devices} on ${devices.id} = ${deviceNotes.deviceId}
          cross join lateral unnest(${deviceNotes.attachmentKeys}) as linked(key)
          where ${deviceNotes.caseId} = ${caseId} ${until(deviceNotes.createdAt)}
          order by linked.key, ${deviceNotes.createdAt}, ${deviceNotes.id}
        ) first
        left join ${evidenceObjects} on ${evidenceObjects.key} = first.key and ${evidenceObjects.caseId} = ${caseId}
        ${after ? sql`where (first.created_at, first.key) > (${atOf(after.at)}, ${after.id} collate "C")` : sql``}
        order by first.created_at, first.key limit ${limit}`;
    // The uploaded exports themselves, once the import worker has hashed them.
    case 'import_file':
      return sql`
        select ${k}::int as kind, ${evidenceImports.id}::text as id, ${evidenceImports.sha256} as sha256,
               ${evidenceImports.sizeBytes} as size_bytes, ${evidenceImports.fileName} as source,
               ${evidenceImports.createdAt} as imported_at, ${evidenceImports.createdById}::text as imported_by,
               ${positionAt(evidenceImports.createdAt)} as p_at, ${evidenceImports.id}::text as p_id, '' as p_sub
        from ${evidenceImports}
        where ${evidenceImports.caseId} = ${caseId} and ${evidenceImports.sha256} is not null
          ${after ? sql`and (${evidenceImports.createdAt}, ${evidenceImports.id}) > (${atOf(after.at)}, ${after.id}::uuid)` : sql``}
          ${until(evidenceImports.createdAt)}
        order by ${evidenceImports.createdAt}, ${evidenceImports.id} limit ${limit}`;
  }
}

/**
 * The items after `after` (from the first when null), at most `limit`, and the position after the
 * last one listed when more follow: one statement whatever the case's size, a UNION ALL of one
 * limited index scan per kind at or after the position's kind.
 */
export async function custodyItemPage(
  tx: Executor,
  caseId: string,
  after: ItemPosition | null,
  limit: number,
  asOf: Date | null = null,
): Promise<{ items: CustodyItem[]; next: ItemPosition | null }> {
  const branches = CUSTODY_ITEM_KINDS.flatMap((kind, index) => {
    if (after && index < after.kind) return [];
    const from = after && index === after.kind ? after : null;
    return [sql`(${kindBranch(kind, caseId, from, limit + 1, asOf)})`];
  });
  const rows = await rawRows<ItemRow>(
    tx,
    sql`select * from (${sql.join(branches, sql` union all `)}) page order by kind, p_at, p_id collate "C", p_sub collate "C" limit ${limit + 1}`,
  );
  const listed = rows.slice(0, limit);
  const last = listed.at(-1);
  return {
    items: listed.map((row) => ({
      kind: CUSTODY_ITEM_KINDS[row.kind]!,
      id: row.id,
      sha256: row.sha256,
      sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
      source: row.source,
      importedAt: new Date(row.imported_at).toISOString(),
      importedBy: row.imported_by,
    })),
    next: rows.length > limit && last ? { kind: last.kind, at: last.p_at, id: last.p_id, sub: last.p_sub } : null,
  };
}

/** The case's events after sequence `after`, up to `until` (the chain head read with them), oldest first. */
export async function custodyEventPage(
  tx: Executor,
  caseId: string,
  organizationId: string,
  after: number,
  limit: number,
  until: number,
): Promise<{ events: CustodyEvent[]; next: number | null }> {
  const rows = await tx
    .select({ event: auditEvents, count: auditReadCounts.count })
    .from(auditEvents)
    .leftJoin(auditReadCounts, eq(auditReadCounts.eventId, auditEvents.id))
    .where(
      and(
        eq(auditEvents.organizationId, organizationId),
        eq(auditEvents.caseId, caseId),
        gt(auditEvents.sequence, after),
        lte(auditEvents.sequence, until),
      ),
    )
    .orderBy(asc(auditEvents.sequence))
    .limit(limit + 1);
  const listed = rows.slice(0, limit);
  return {
    events: listed.map(({ event, count }) => auditEventEntity(event, count)),
    next: rows.length > limit ? listed.at(-1)!.event.sequence : null,
  };
}

/** What the counts of a case were at a state of its evidence (`covers`), kept a while per process. */
interface CountsAt {
  covers: string;
  items: number;
  /** Events up to the last one that is not a custody read or export (the state's own event). */
  eventsUpToCovers: number;
}
/**
 * Cases whose counts this process keeps (a few hundred bytes each), the least recently read going
 * first, and for how long (a backstop: a state never changes without an event).
 */
export const COUNTS_CACHE_CASES = 200;
const COUNTS_CACHE_MS = 10 * 60_000;
const countsCache = new LRUCache<string, CountsAt>({ max: COUNTS_CACHE_CASES, ttl: COUNTS_CACHE_MS });

/** How many cases' counts this process holds (the tests of its bound). */
export function cachedCustodyCountCases(): number {
  return countsCache.size;
}

/**
 * How many items and events the case has (all pages) and the organization's chain head, in two
 * statements. Counting a million items takes a few hundred milliseconds, so the counts are kept
 * per process for the state they were taken at: every change of the evidence records an event in
 * its own transaction, so the case's last event that is not a custody read or export (its
 * `covers`, read in the same snapshot) names the items exactly; only the custody events after it
 * are counted again, from the index, on a later page.
 */
export async function custodySummary(
  tx: Executor,
  caseId: string,
  organizationId: string,
): Promise<{ itemCount: number; eventCount: number; chainHead: ChainHead }> {
  const [state] = await rawRows<{
    covers_sequence: string | number | null;
    covers_hash: string | null;
    sequence: string | number | null;
    hash: string | null;
  }>(
    tx,
    sql`select last.sequence as covers_sequence, last.hash as covers_hash, head.sequence, head.hash
    from (select 1) one
    left join ${auditChainHeads} head on head.organization_id = ${organizationId}
    left join lateral (
      select ${auditEvents.sequence} as sequence, ${auditEvents.hash} as hash from ${auditEvents}
      where ${auditEvents.organizationId} = ${organizationId} and ${auditEvents.caseId} = ${caseId}
        and ${auditEvents.action} not like 'evidence.custody.%'
      order by ${auditEvents.sequence} desc limit 1
    ) last on true`,
  );
  const coversSequence = Number(state?.covers_sequence ?? 0);
  const covers = state?.covers_hash ? `${coversSequence}:${state.covers_hash}` : 'no events';
  const chainHead = state?.hash
    ? { sequence: Number(state.sequence), hash: state.hash }
    : { sequence: 0, hash: GENESIS_HASH };
  const eventsAfterCovers = sql`(select count(*) from ${auditEvents} where ${auditEvents.organizationId} = ${organizationId}
    and ${auditEvents.caseId} = ${caseId} and ${auditEvents.sequence} > ${coversSequence})`;

  const kept = countsCache.get(caseId);
  if (kept && kept.covers === covers) {
    const [row] = await rawRows<{ later: string | number }>(tx, sql`select ${eventsAfterCovers} as later`);
    return { itemCount: kept.items, eventCount: kept.eventsUpToCovers + Number(row!.later), chainHead };
  }
  const [row] = await rawRows<{ items: string | number; events: string | number; later: string | number }>(
    tx,
    sql`select
      (select count(*) from ${emails} where ${emails.caseId} = ${caseId})
      + (select count(*) from ${attachments} join ${emails} on ${emails.id} = ${attachments.emailId} where ${emails.caseId} = ${caseId})
      + (select count(*) from ${networkMessages} where ${networkMessages.caseId} = ${caseId})
      + (select count(*) from ${supportTickets} where ${supportTickets.caseId} = ${caseId})
      + (select count(*) from ${deviceNotes} where ${deviceNotes.caseId} = ${caseId})
      + (select count(distinct linked.key) from ${deviceNotes} cross join lateral unnest(${deviceNotes.attachmentKeys}) as linked(key) where ${deviceNotes.caseId} = ${caseId})
      + (select count(*) from ${evidenceImports} where ${evidenceImports.caseId} = ${caseId} and ${evidenceImports.sha256} is not null)
        as items,
      (select count(*) from ${auditEvents} where ${auditEvents.organizationId} = ${organizationId}
        and ${auditEvents.caseId} = ${caseId} and ${auditEvents.sequence} <= ${coversSequence}) as events,
      ${eventsAfterCovers} as later`,
  );
  const items = Number(row!.items);
  const eventsUpToCovers = Number(row!.events);
  countsCache.set(caseId, { covers, items, eventsUpToCovers });
  return { itemCount: items, eventCount: eventsUpToCovers + Number(row!.later), chainHead };
}

/**
 * One page of the custody record: the summary and chain head, a page of items and one of events,
 * in one read-only repeatable-read snapshot (the head is at or after every event counted or
 * listed, an import committing meanwhile is not half seen): four statements whatever the size.
 */
async function readCustodyPage(caseId: string, organizationId: string, query: z.output<typeof CaseCustodyQuery>) {
  const perPage = query.perPage ?? CUSTODY_DEFAULT_PER_PAGE;
  const itemsAfter = query.itemsCursor ? itemPositionOf(query.itemsCursor) : null;
  const eventsAfter = query.eventsCursor ? eventSequenceOf(query.eventsCursor) : 0;
  return db().transaction(
    async (tx) => {
      const summary = await custodySummary(tx, caseId, organizationId);
      const items = query.list === 'events' ? null : await custodyItemPage(tx, caseId, itemsAfter, perPage);
      const events =
        query.list === 'items'
          ? null
          : await custodyEventPage(tx, caseId, organizationId, eventsAfter, perPage, summary.chainHead.sequence);
      return {
        ...summary,
        items: items && { data: items.items, nextCursor: items.next && itemCursor(items.next) },
        events: events && { data: events.events, nextCursor: events.next === null ? null : eventCursor(events.next) },
      };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** Rows read per statement when a whole list is walked (an export, a PDF made at once). */
export const CUSTODY_READ_CHUNK = 5_000;

/** Every item of the case imported up to `asOf` after `from`, in the answer's order, CUSTODY_READ_CHUNK per statement. */
export async function* allCustodyItems(
  tx: Executor,
  caseId: string,
  asOf: Date | null,
  from: ItemPosition | null = null,
): AsyncGenerator<{ items: CustodyItem[]; next: ItemPosition | null }> {
  let after = from;
  do {
    const page = await custodyItemPage(tx, caseId, after, CUSTODY_READ_CHUNK, asOf);
    yield page;
    after = page.next;
  } while (after);
}

/** Every event of the case after `from` up to sequence `until`, oldest first, CUSTODY_READ_CHUNK per statement. */
export async function* allCustodyEvents(
  tx: Executor,
  caseId: string,
  organizationId: string,
  until: number,
  from = 0,
): AsyncGenerator<{ events: CustodyEvent[]; next: number | null }> {
  let after: number | null = from;
  do {
    const page = await custodyEventPage(tx, caseId, organizationId, after, CUSTODY_READ_CHUNK, until);
    yield page;
    after = page.next;
  } while (after !== null);
}

/**
 * What a custody PDF covers, as it stands: the case's last audit event but the custody reads and
 * exports themselves. Every change of its evidence records an event in the same transaction (imports,
 * notes, the case renamed or deleted), so a PDF made at the same last event lists the same items
 * and events; a read of the custody record adds nothing to the custody of the evidence.
 */
export async function custodyCovers(caseId: string, organizationId: string): Promise<string> {
  const [last] = await db()
    .select({ sequence: auditEvents.sequence, hash: auditEvents.hash })
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.organizationId, organizationId),
        eq(auditEvents.caseId, caseId),
        // Reads and exports of the custody record add nothing to the custody of the evidence.
        notLike(auditEvents.action, 'evidence.custody.%'),
      ),
    )
    .orderBy(desc(auditEvents.sequence))
    .limit(1);
  return last ? `${last.sequence}:${last.hash}` : 'no events';
}

/** The whole custody record of a small case (the PDF made at once), read in one snapshot. */
async function readWholeCustody(caseId: string, organizationId: string) {
  return db().transaction(
    async (tx: Tx) => {
      const summary = await custodySummary(tx, caseId, organizationId);
      if (summary.itemCount + summary.eventCount > custodyLimits.pdfAtOnceMax)
        throw new CustodyTooLargeError(summary.itemCount, summary.eventCount, custodyLimits.pdfAtOnceMax);
      const items: CustodyItem[] = [];
      for await (const page of allCustodyItems(tx, caseId, null)) items.push(...page.items);
      const events: CustodyEvent[] = [];
      for await (const page of allCustodyEvents(tx, caseId, organizationId, summary.chainHead.sequence))
        events.push(...page.events);
      return { items, events, chainHead: summary.chainHead };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/**
 * GET /cases/{caseId}/custody (extension): the case's chain of custody as JSON, one page at a time
 * (every evidence item with its hash, the case's audit events oldest first, each list behind its
 * own cursor; the counts and the organization's chain head in every page), or stored as a PDF with
 * a time-limited download link. The endpoint records the read itself.
 *
 * The PDF at once is for a case of at most CUSTODY_PDF_AT_ONCE_MAX items and events (409
 * CUSTODY_TOO_LARGE beyond, naming the export route). It is a generated document
 * (lib/storage/generated-documents.ts), kept under `generated/cases/<caseId>/custody/` for a week
 * and counted in the organization's storage: asked for again while nothing it covers changed
 * (custodyCovers), the same PDF is handed out, as of when it was made.
 */
export async function getCaseCustody(ctx: { caseContext: CaseContext }, query: z.output<typeof CaseCustodyQuery>) {
  const { id: caseId, organizationId, name: caseName } = ctx.caseContext.case;
  const at = now();
  if ((query.format ?? 'json') === 'json') {
    const page = await readCustodyPage(caseId, organizationId, query);
    return { caseId, generatedAt: at.toISOString(), ...page };
  }

  const document = await generatedDocument({
    organizationId,
    caseId,
    kind: 'custody',
    covers: await custodyCovers(caseId, organizationId),
    fileName: `custody-${caseId}-${at.toISOString().slice(0, 10)}.pdf`,
    contentType: 'application/pdf',
    linkSeconds: CUSTODY_LINK_SECONDS,
    render: async () => {
      const { items, events, chainHead } = await readWholeCustody(caseId, organizationId);
      const { renderCustodyPdf } = await import('./custody-pdf');
      const bytes = await renderCustodyPdf({ caseId, caseName, items, events, chainHead }, at);
      return {
        bytes,
        details: { generatedAt: at.toISOString(), itemCount: items.length, eventCount: events.length, chainHead },
      };
    },
  });
  const details = document.details as {
    generatedAt: string;
    itemCount: number;
    eventCount: number;
    chainHead: ChainHead;
  };
  return {
    caseId,
    generatedAt: details.generatedAt,
    fileName: document.fileName,
    contentType: 'application/pdf' as const,
    sizeBytes: document.bytes,
    storageKey: document.objectKey,
    itemCount: details.itemCount,
    eventCount: details.eventCount,
    chainHead: details.chainHead,
    downloadUrl: await objectStorage().downloadUrl(document.objectKey, CUSTODY_LINK_SECONDS),
    expiresAt: addSeconds(at, CUSTODY_LINK_SECONDS).toISOString(),
  };
}
