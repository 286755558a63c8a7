import { sql } from 'drizzle-orm';
import type { TaggingItemKind } from '../../../schemas/review/tagging';
import { now } from '../../clock';
import type { Tx } from '../../db/client';
import { rawRows } from '../../db/raw-rows';
import { tags } from '../../db/schema/review';
import { newId } from '../../ids';
import { textArray } from '../../db/text-array';
import { ITEM_TABLES } from './items';

/** One link put on or taken off an item. */
export interface TaggingChange {
  op: 'add' | 'remove';
  kind: TaggingItemKind;
  tagId: string;
  itemId: string;
}

export interface TaggingWork {
  /** Who does it: `addedById`/`removedById` of the links (null for no user). */
  userId: string | null;
  add: readonly string[];
  remove: readonly string[];
  /** Item ids per kind, lowercased and without repeats, every one checked to exist and be visible. */
  items: Partial<Record<TaggingItemKind, readonly string[]>>;
}

/**
 * Puts `add` on every item that does not carry it yet (a new link row each: a tag removed earlier
 * gets a new row, the earlier one stays), and ends the active links of `remove` on them. One
 * statement per kind of item (insert ... select from unnest, update ... where = any), whatever
 * the number of items: a fixed number of round trips. Tags to add that were deactivated meanwhile
 * are skipped; a link made concurrently is kept (the partial unique index, on conflict do nothing).
 * Answers the links changed.
 */
export async function applyTagging(tx: Tx, work: TaggingWork): Promise<TaggingChange[]> {
  const at = now();
  const changes: TaggingChange[] = [];
  for (const [kind, ids] of Object.entries(work.items) as Array<[TaggingItemKind, readonly string[]]>) {
    if (ids.length === 0) continue;
    const { links, itemColumn } = ITEM_TABLES[kind];
    const pairItems: string[] = [];
    const pairTags: string[] = [];
    const pairIds: string[] = [];
    for (const itemId of ids)
      for (const tagId of work.add) {
        pairItems.push(itemId);
        pairTags.push(tagId);
        pairIds.push(newId());
      }
    const timestamp = sql`${at.toISOString()}::timestamptz`;
    const rows = await rawRows<{ op: 'add' | 'remove'; item_id: string; tag_id: string }>(
      tx,
      sql`with added as (
        insert into ${links} (id, ${itemColumn}, tag_id, added_by, added_by_id, created_at, updated_at)
        select pair.id::uuid, pair.item_id::uuid, pair.tag_id::uuid, 'user', ${work.userId}, ${timestamp}, ${timestamp}
        from unnest(${textArray(pairIds)}, ${textArray(pairItems)}, ${textArray(pairTags)}) as pair(id, item_id, tag_id)
        where exists (select 1 from ${tags} where ${tags.id} = pair.tag_id::uuid and ${tags.isActive})
        on conflict do nothing
        returning ${itemColumn} as item_id, tag_id
      ), removed as (
        update ${links} set removed_at = ${timestamp}, removed_by = 'user', removed_by_id = ${work.userId}, updated_at = ${timestamp}
        where ${itemColumn} = any(${textArray(ids)}::uuid[]) and tag_id = any(${textArray(work.remove)}::uuid[]) and removed_at is null
        returning ${itemColumn} as item_id, tag_id
      )
      select 'add' as op, item_id::text as item_id, tag_id::text as tag_id from added
      union all
      select 'remove' as op, item_id::text as item_id, tag_id::text as tag_id from removed`,
    );
    for (const row of rows) changes.push({ op: row.op, kind, tagId: row.tag_id, itemId: row.item_id });
  }
  return changes;
}
