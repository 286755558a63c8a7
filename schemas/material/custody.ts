import * as z from 'zod/mini';
import { AuditEventEntity } from '../audit/audit-events';
import { DateTime, Id, IdText } from '../common/fields';
import { QueryInt } from '../common/paging';

export const CUSTODY_ITEM_KINDS = [
  'email',
  'attachment',
  'network_message',
  'support_ticket',
  'device_note',
  'note_attachment',
  'import_file',
] as const;

/** Largest page of items or events one custody answer lists (about 0.5 MB of events). */
export const CUSTODY_MAX_PER_PAGE = 1000;
export const CUSTODY_DEFAULT_PER_PAGE = 100;

/** An opaque position from an earlier answer's `nextCursor` (base64url text). */
const Cursor = z
  .string()
  .check(z.minLength(1), z.maxLength(400), z.regex(/^[A-Za-z0-9_-]+$/, 'Expected a nextCursor of an earlier answer'));

export const CaseCustodyQuery = z.object({
  format: z.optional(z.enum(['json', 'pdf'])),
  /** Items and events per page (each), 1 to 1000; 100 when omitted. JSON only. */
  perPage: z.optional(QueryInt(1, CUSTODY_MAX_PER_PAGE)),
  /** The items after this position: `items.nextCursor` of the previous answer. */
  itemsCursor: z.optional(Cursor),
  /** The events after this position: `events.nextCursor` of the previous answer. */
  eventsCursor: z.optional(Cursor),
  /** Only this list (the other is null): for walking one list without re-reading the other's first page. */
  list: z.optional(z.enum(['items', 'events'])),
});

/** SHA-256 in lowercase hex; null for items imported before hashes were recorded. */
const Sha256 = z.nullable(z.string().check(z.regex(/^[0-9a-f]{64}$/)));

export const CustodyItemEntity = z
  .object({
    kind: z.enum(CUSTODY_ITEM_KINDS),
    /** The row id; a note attachment's is its object key; an import file's is the import's id. */
    id: z.string(),
    sha256: Sha256,
    sizeBytes: z.nullable(z.number()),
    /** The imported file's name, or the device a note came from. */
    source: z.nullable(z.string()),
    importedAt: DateTime,
    importedBy: z.nullable(Id),
  })
  .register(z.globalRegistry, { id: 'CustodyItemEntity' });

/** The organization's chain head when the report was read: every event of the case is at or before it. */
const ChainHead = z.object({ sequence: z.number(), hash: z.string() });

/** One page of a custody list: its records in a stable order, and where the next page starts. */
const CursorPage = <T extends z.ZodMiniType>(record: T) =>
  z.object({
    data: z.array(record),
    /** Pass as `itemsCursor` / `eventsCursor` for the next page; null when nothing follows. */
    nextCursor: z.nullable(z.string()),
  });

export const CaseCustodyEntity = z
  .object({
    caseId: Id,
    generatedAt: DateTime,
    /** Every evidence item of the case (all pages), when this answer was read. */
    itemCount: z.number(),
    /** Every audit event of the case (all pages) up to the chain head. */
    eventCount: z.number(),
    /** Items by kind (email, attachment, ...), then import time and id; null when `list=events`. */
    items: z.nullable(CursorPage(CustodyItemEntity)),
    /** The case's audit events oldest first (by sequence); null when `list=items`. */
    events: z.nullable(CursorPage(AuditEventEntity)),
    chainHead: ChainHead,
  })
  .register(z.globalRegistry, { id: 'CaseCustodyEntity' });

export const CaseCustodyFileEntity = z
  .object({
    caseId: Id,
    generatedAt: DateTime,
    fileName: z.string(),
    contentType: z.literal('application/pdf'),
    sizeBytes: z.number(),
    storageKey: z.string(),
    itemCount: z.number(),
    eventCount: z.number(),
    chainHead: ChainHead,
    downloadUrl: z.string(),
    expiresAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'CaseCustodyFileEntity' });

export const CaseCustodyAnswer = z.union([CaseCustodyEntity, CaseCustodyFileEntity]);

export const CustodyExportPath = z.object({ caseId: IdText, exportId: IdText });

export const CustodyExportEntity = z
  .object({
    id: Id,
    caseId: Id,
    /** `expired` once its volumes were removed (a week after they were made): start another. */
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'expired']),
    createdAt: DateTime,
    finishedAt: z.nullable(DateTime),
    /** The snapshot: every item imported up to this time, every event of the case up to `chainHead`. */
    asOf: DateTime,
    chainHead: ChainHead,
    progress: z.object({
      itemsWritten: z.number(),
      itemTotal: z.number(),
      eventsWritten: z.number(),
      eventTotal: z.number(),
      volumesWritten: z.number(),
      /** Of the lines to write (an event counts five items); 100 only once succeeded. */
      percent: z.number(),
    }),
    error: z.nullable(z.object({ code: z.string(), message: z.string() })),
    /** The PDF volumes stored so far, in order: each a whole document, the chain head printed in every one. */
    volumes: z.array(
      z.object({
        volume: z.number(),
        fileName: z.string(),
        sizeBytes: z.number(),
        items: z.number(),
        events: z.number(),
        /** A time-limited link once the export succeeded, when read (GET); null otherwise. */
        downloadUrl: z.nullable(z.string()),
        expiresAt: z.nullable(DateTime),
      }),
    ),
  })
  .register(z.globalRegistry, { id: 'CustodyExportEntity' });
