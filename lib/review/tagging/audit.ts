import { sealWorkProduct } from '../../audit/work-product';
import type { TagSide } from '../tag-visibility';
import type { TaggingChange } from './apply-tagging';
import type { NamedTag } from './checks';

/** The changes grouped for the trail: per operation, tag and kind, the item ids. */
export function groupedChanges(changes: readonly TaggingChange[]) {
  const groups = new Map<string, { op: 'add' | 'remove'; tagId: string; kind: string; itemIds: string[] }>();
  for (const change of changes) {
    const key = `${change.op} ${change.tagId} ${change.kind}`;
    let group = groups.get(key);
    if (!group) {
      group = { op: change.op, tagId: change.tagId, kind: change.kind, itemIds: [] };
      groups.set(key, group);
    }
    group.itemIds.push(change.itemId);
  }
  return [...groups.values()];
}

export const countsOf = (changes: readonly TaggingChange[]) => ({
  added: changes.filter((c) => c.op === 'add').length,
  removed: changes.filter((c) => c.op === 'remove').length,
});

/**
 * What a tagging event stores. The firm's: everything (`details`: the tags with their names, the
 * items by kind and id, the links changed) with the counts. Opposing counsel's tags and taggings
 * are their work product, and the firm reads the trail: only the counts, the names of the detail
 * fields and the SHA-256 (hex) of their RFC 8785 canonical JSON, which proves a tagging they later
 * present was the one made (as lib/audit/read-events.ts keeps their queries).
 */
export function taggingMetadata(
  side: TagSide,
  counts: Record<string, number | string | null>,
  details: Record<string, unknown>,
): Record<string, unknown> {
  if (side === 'org') return { ...counts, ...details };
  const sealed = sealWorkProduct(details);
  return { ...counts, detailKeys: sealed.keys, detailsSha256: sealed.sha256 };
}

/** The tag lists of an event: ids and names. */
export const tagDetails = (tags: { add: NamedTag[]; remove: NamedTag[] }) => ({
  addTags: tags.add,
  removeTags: tags.remove,
});
