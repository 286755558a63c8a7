import type { tags } from '../db/schema/review';

type TagRow = typeof tags.$inferSelect;

/** The contract's Tag entity. */
export function toTagEntity(tag: TagRow) {
  return {
    id: tag.id,
    name: tag.name,
    nameLowercase: tag.nameLowercase,
    backgroundColor: tag.backgroundColor,
    textColor: tag.textColor,
    type: tag.type,
    severity: tag.severity,
    origin: tag.origin,
    creatorAccessType: tag.creatorAccessType,
    isActive: tag.isActive,
    createdAt: tag.createdAt.toISOString(),
    updatedAt: tag.updatedAt.toISOString(),
  };
}
