import type { AuditAction } from '../../audit/actions';
import { recordAudit } from '../../audit/record';
import { sealWorkProduct } from '../../audit/work-product';
import type { Tx } from '../../db/client';
import type { tags } from '../../db/schema/review';

type TagRow = typeof tags.$inferSelect;

/**
 * What the audit event of a tag change stores. The firm's tags: the tag's id, name, type and side
 * and `details` (the fields set or changed). Opposing counsel's tags are their work product: only
 * the type, the side, the keys of what the firm's event would hold and the SHA-256 (hex) of its
 * RFC 8785 canonical JSON, which proves a change they later present was the one made (as
 * lib/audit/read-events.ts `readMetadata` keeps their queries).
 */
export function tagEventMetadata(tag: TagRow, details: Record<string, unknown>): Record<string, unknown> {
  const side = tag.creatorAccessType ?? 'org';
  const full = { tagId: tag.id, name: tag.name, type: tag.type, side, ...details };
  if (side === 'org') return full;
  return { type: tag.type, side, ...sealWorkProduct(full) };
}

/** Records a tag change in the change's transaction; opposing counsel's events name no tag (no target). */
export function recordTagEvent(tx: Tx, action: AuditAction, tag: TagRow, details: Record<string, unknown> = {}): void {
  const firm = (tag.creatorAccessType ?? 'org') === 'org';
  recordAudit(tx, {
    action,
    organizationId: tag.organizationId,
    caseId: tag.caseId,
    target: firm ? { type: 'tag', id: tag.id } : null,
    metadata: tagEventMetadata(tag, details),
  });
}
