import { and, type SQL, sql } from 'drizzle-orm';
import type { TaggingItemKind } from '../../../schemas/review/tagging';
import type { Executor } from '../../db/client';
import { rawRows } from '../../db/raw-rows';
import { tags } from '../../db/schema/review';
import { idIn, isUuid, matchableIds } from '../../ids';
import { type TagViewer, visibleTag } from '../tag-visibility';
import { EvidenceItemNotFoundError, InactiveTagError, TagNotFoundError } from './errors';
import { textArray } from '../../db/text-array';
import { ITEM_TABLES, visibleItem } from './items';

export interface NamedTag {
  id: string;
  name: string;
}

/**
 * The tags to add and remove, each visible to the viewer (else 404: a tag of the other side does
 * not exist for them) and, to add, active (409). One query. Answers them by id, ids lowercased.
 */
export async function checkTags(
  executor: Executor,
  viewer: TagViewer,
  add: readonly string[],
  remove: readonly string[],
): Promise<{ add: NamedTag[]; remove: NamedTag[] }> {
  const asked = [...add, ...remove];
  if (asked.some((id) => !isUuid(id))) throw new TagNotFoundError();
  const ids = matchableIds(asked);
  const rows = ids.length
    ? await executor
        .select({ id: tags.id, name: tags.name, isActive: tags.isActive })
        .from(tags)
        .where(and(idIn(tags.id, ids), visibleTag(viewer)))
    : [];
  if (rows.length !== ids.length) throw new TagNotFoundError();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const pick = (list: readonly string[]) => matchableIds(list).map((id) => byId.get(id)!);
  const added = pick(add);
  if (added.some((tag) => !tag.isActive)) throw new InactiveTagError();
  return {
    add: added.map(({ id, name }) => ({ id, name })),
    remove: pick(remove).map(({ id, name }) => ({ id, name })),
  };
}

/** The items by kind, lowercased and without repeats; an id that is not a UUID is an item that does not exist (404). */
export function itemsByKind(
  items: ReadonlyArray<{ kind: TaggingItemKind; id: string }>,
): Partial<Record<TaggingItemKind, string[]>> {
  if (items.some((item) => !isUuid(item.id))) throw new EvidenceItemNotFoundError();
  const byKind: Partial<Record<TaggingItemKind, string[]>> = {};
  for (const item of items) {
    const list = byKind[item.kind] ?? [];
    list.push(item.id);
    byKind[item.kind] = list;
  }
  for (const kind of Object.keys(byKind) as TaggingItemKind[]) byKind[kind] = matchableIds(byKind[kind]!);
  return byKind;
}

/**
 * Every item exists in the case and the viewer's side may see it, else 404 (one the side may not
 * see is answered as one that does not exist). One query: a count per kind.
 */
export async function checkItems(
  executor: Executor,
  viewer: TagViewer,
  byKind: Partial<Record<TaggingItemKind, readonly string[]>>,
): Promise<void> {
  const kinds = (Object.keys(byKind) as TaggingItemKind[]).filter((kind) => byKind[kind]!.length > 0);
  if (kinds.length === 0) return;
  const counts: SQL[] = kinds.map((kind, index) => {
    const { items } = ITEM_TABLES[kind];
    return sql`(select count(*)::int from ${items} where ${items.id} = any(${textArray(byKind[kind]!)}::uuid[]) and ${visibleItem(kind, viewer.side, viewer.caseId)}) as ${sql.identifier(`k${index}`)}`;
  });
  const [row] = await rawRows<Record<string, number>>(executor, sql`select ${sql.join(counts, sql`, `)}`);
  kinds.forEach((kind, index) => {
    if (Number(row![`k${index}`]) !== byKind[kind]!.length) throw new EvidenceItemNotFoundError();
  });
}
