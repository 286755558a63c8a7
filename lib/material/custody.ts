import { and, asc, desc, eq, inArray, isNotNull, ne, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { CaseCustodyEntity, CaseCustodyQuery, CustodyItemEntity } from '../../schemas/material/custody';
import { auditEventEntity, GENESIS_HASH } from '../audit';
import type { CaseContext } from '../cases/context';
import { addSeconds, now } from '../clock';
import { db, type Tx } from '../db/client';
import {
  attachments,
  auditChainHeads,
  auditEvents,
  auditReadCounts,
  deviceNotes,
  devices,
  emails,
  evidenceImports,
  evidenceObjects,
  networkMessages,
  supportTickets,
} from '../db/schema';
import { objectStorage } from '../storage';
import { generatedDocument } from '../storage/generated-documents';

/** How long the PDF's download link works, as for the billing report. */
export const CUSTODY_LINK_SECONDS = 15 * 60;

export type CustodyItemKind = z.output<typeof CustodyItemEntity>['kind'];
export type CustodyItem = z.output<typeof CustodyItemEntity>;
export type CustodyEvent = ReturnType<typeof auditEventEntity>;
export type CaseCustody = Omit<z.output<typeof CaseCustodyEntity>, 'events'> & { events: CustodyEvent[] };

/**
 * The items of a table filled by the file importers (emails, network messages, support tickets):
 * the hash, size, file and importer each row recorded at import, oldest first.
 */
function importedRows(tx: Tx, table: typeof emails | typeof networkMessages | typeof supportTickets, caseId: string) {
  return tx
    .select({
      id: table.id,
      sha256: table.sha256,
      sizeBytes: table.sizeBytes,
      source: table.importSource,
      importedAt: table.createdAt,
      importedBy: table.importedById,
    })
    .from(table)
    .where(eq(table.caseId, caseId))
    .orderBy(asc(table.createdAt), asc(table.id));
}

/** How a device is named as a note's source: the identifier the extractor sent, and its type. */
const deviceSource = (device: { deviceId: string; deviceType: string }) => `${device.deviceId} (${device.deviceType})`;

/**
 * Every evidence item of the case, its audit events and the organization's chain head, read in one
 * read-only repeatable-read snapshot (so the head is at or after every event listed, and no import
 * committing meanwhile is half seen), in nine queries whatever the number of items.
 */
async function readCustody(
  caseId: string,
  organizationId: string,
): Promise<Omit<CaseCustody, 'caseId' | 'generatedAt'>> {
  return db().transaction(
    async (tx) => {
      const importedNoteKeys = tx
        .select({ key: sql<string>`unnest(${deviceNotes.attachmentKeys})` })
        .from(deviceNotes)
        .where(eq(deviceNotes.caseId, caseId));
      const [emailRows, attachmentRows, networkRows, ticketRows, noteRows, noteObjects, fileRows, eventRows, heads] =
        await Promise.all([
          importedRows(tx, emails, caseId),
          // An attachment's hash is on its row; attachments stored before that have it on their object only.
          tx
            .select({
              id: attachments.id,
              sha256: sql<string | null>`coalesce(${attachments.sha256}, ${evidenceObjects.sha256})`,
              sizeBytes: attachments.size,
              source: emails.importSource,
              importedAt: attachments.createdAt,
              importedBy: emails.importedById,
            })
            .from(attachments)
            .innerJoin(emails, eq(emails.id, attachments.emailId))
            .leftJoin(evidenceObjects, eq(evidenceObjects.key, attachments.providerId))
            .where(eq(emails.caseId, caseId))
            .orderBy(asc(attachments.createdAt), asc(attachments.id)),
          importedRows(tx, networkMessages, caseId),
          importedRows(tx, supportTickets, caseId),
          tx
            .select({
              id: deviceNotes.id,
              sha256: deviceNotes.sha256,
              sizeBytes: deviceNotes.sizeBytes,
              deviceId: devices.deviceId,
              deviceType: devices.deviceType,
              importedAt: deviceNotes.createdAt,
              importedBy: deviceNotes.importedById,
              attachmentKeys: deviceNotes.attachmentKeys,
            })
            .from(deviceNotes)
            .innerJoin(devices, eq(devices.id, deviceNotes.deviceId))
            .where(eq(deviceNotes.caseId, caseId))
            .orderBy(asc(deviceNotes.createdAt), asc(deviceNotes.id)),
          tx
            .select({ key: evidenceObjects.key, sha256: evidenceObjects.sha256, sizeBytes: evidenceObjects.sizeBytes })
            .from(evidenceObjects)
            .where(and(eq(evidenceObjects.caseId, caseId), inArray(evidenceObjects.key, importedNoteKeys))),
          // The uploaded exports themselves, once the import worker has hashed them.
          tx
            .select({
              id: evidenceImports.id,
              sha256: evidenceImports.sha256,
              sizeBytes: evidenceImports.sizeBytes,
              source: evidenceImports.fileName,
              importedAt: evidenceImports.createdAt,
              importedBy: evidenceImports.createdById,
            })
            .from(evidenceImports)
            .where(and(eq(evidenceImports.caseId, caseId), isNotNull(evidenceImports.sha256)))
            .orderBy(asc(evidenceImports.createdAt), asc(evidenceImports.id)),
          tx
            .select({ event: auditEvents, count: auditReadCounts.count })
            .from(auditEvents)
            .leftJoin(auditReadCounts, eq(auditReadCounts.eventId, auditEvents.id))
            .where(and(eq(auditEvents.organizationId, organizationId), eq(auditEvents.caseId, caseId)))
            .orderBy(asc(auditEvents.sequence)),
          tx.select().from(auditChainHeads).where(eq(auditChainHeads.organizationId, organizationId)),
        ]);

      const item = (kind: CustodyItemKind, row: Omit<CustodyItem, 'kind' | 'importedAt'> & { importedAt: Date }) => ({
        kind,
        id: row.id,
        sha256: row.sha256,
        sizeBytes: row.sizeBytes,
        source: row.source,
        importedAt: row.importedAt.toISOString(),
        importedBy: row.importedBy,
      });
      const items: CustodyItem[] = [
        ...emailRows.map((row) => item('email', row)),
        ...attachmentRows.map((row) => item('attachment', row)),
        ...networkRows.map((row) => item('network_message', row)),
        ...ticketRows.map((row) => item('support_ticket', row)),
        ...noteRows.map((row) => item('device_note', { ...row, source: deviceSource(row) })),
        ...noteAttachments(noteRows, noteObjects),
        ...fileRows.map((row) => item('import_file', row)),
      ];
      const [head] = heads;
      return {
        items,
        events: eventRows.map(({ event, count }) => auditEventEntity(event, count)),
        chainHead: head ? { sequence: head.sequence, hash: head.hash } : { sequence: 0, hash: GENESIS_HASH },
      };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/**
 * One item per object key the case's notes link, imported with the first note that linked it
 * (notes come oldest first), with the hash and size recorded for the object.
 */
function noteAttachments(
  notes: Array<
    { attachmentKeys: string[]; importedAt: Date; importedBy: string | null } & Parameters<typeof deviceSource>[0]
  >,
  objects: Array<{ key: string; sha256: string; sizeBytes: number }>,
): CustodyItem[] {
  const objectOf = new Map(objects.map((object) => [object.key, object]));
  const firstLinked = new Map<string, CustodyItem>();
  for (const note of notes)
    for (const key of note.attachmentKeys) {
      if (firstLinked.has(key)) continue;
      const object = objectOf.get(key);
      firstLinked.set(key, {
        kind: 'note_attachment',
        id: key,
        sha256: object?.sha256 ?? null,
        sizeBytes: object?.sizeBytes ?? null,
        source: deviceSource(note),
        importedAt: note.importedAt.toISOString(),
        importedBy: note.importedBy,
      });
    }
  return [...firstLinked.values()].sort((a, b) =>
    a.importedAt === b.importedAt ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.importedAt < b.importedAt ? -1 : 1,
  );
}

/**
 * What a custody PDF covers, as it stands: the case's last audit event but the custody reads
 * themselves. Every change of its evidence records an event in the same transaction (imports,
 * notes, the case renamed or deleted), so a PDF made at the same last event lists the same items
 * and events; a read of the custody record adds nothing to the custody of the evidence.
 */
async function custodyCovers(caseId: string, organizationId: string): Promise<string> {
  const [last] = await db()
    .select({ sequence: auditEvents.sequence, hash: auditEvents.hash })
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.organizationId, organizationId),
        eq(auditEvents.caseId, caseId),
        ne(auditEvents.action, 'evidence.custody.read'),
      ),
    )
    .orderBy(desc(auditEvents.sequence))
    .limit(1);
  return last ? `${last.sequence}:${last.hash}` : 'no events';
}

/**
 * GET /cases/{caseId}/custody (extension): the case's chain of custody (every evidence item with
 * its hash, the case's audit events oldest first, the organization's chain head) as JSON, or
 * stored as a PDF with a time-limited download link. The endpoint records the read itself.
 *
 * The PDF is a generated document (lib/storage/generated-documents.ts), kept under
 * `generated/cases/<caseId>/custody/` for a week and counted in the organization's storage: asked
 * for again while nothing it covers changed (custodyCovers), the same PDF is handed out, as of
 * when it was made.
 */
export async function getCaseCustody(ctx: { caseContext: CaseContext }, query: z.output<typeof CaseCustodyQuery>) {
  const { id: caseId, organizationId, name: caseName } = ctx.caseContext.case;
  const at = now();
  if ((query.format ?? 'json') === 'json') {
    const { items, events, chainHead } = await readCustody(caseId, organizationId);
    return { caseId, generatedAt: at.toISOString(), items, events, chainHead };
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
      const { items, events, chainHead } = await readCustody(caseId, organizationId);
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
    chainHead: CaseCustody['chainHead'];
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
