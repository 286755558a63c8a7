import * as z from 'zod/mini';
import { AuditEventEntity } from '../audit/audit-events';
import { DateTime, Id } from '../common/fields';

export const CUSTODY_ITEM_KINDS = [
  'email',
  'attachment',
  'network_message',
  'support_ticket',
  'device_note',
  'note_attachment',
  'import_file',
] as const;

export const CaseCustodyQuery = z.object({ format: z.optional(z.enum(['json', 'pdf'])) });

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

export const CaseCustodyEntity = z
  .object({
    caseId: Id,
    generatedAt: DateTime,
    items: z.array(CustodyItemEntity),
    events: z.array(AuditEventEntity),
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
