import { and, eq, type SQL } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { CreateCaseTagDto, UpdateTagDto } from '../../../schemas/review/tags';
import type { Tx } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { tags } from '../../db/schema/review';
import { transaction } from '../../db/transaction';
import { idEquals } from '../../ids';
import { toTagEntity } from '../tag-entity';
import type { TagSide } from '../tag-visibility';
import { TagInactiveError, TagNameTakenError, TagNotFoundError } from './errors';
import { recordTagEvent } from './tag-events';

export type TagRow = typeof tags.$inferSelect;

/** The unique index on active names per scope (lib/db/schema/review.ts). */
const ACTIVE_NAME_KEY = 'tags_active_name_key';

/** The contract's Tag with the case it belongs to (null for organization and system tags). */
export const toReviewTag = (row: TagRow) => ({ ...toTagEntity(row), caseId: row.caseId });

/** Where a new tag goes: its organization, case (none for organization tags), type, side and creator. */
export interface NewTagScope {
  organizationId: string;
  caseId: string | null;
  type: 'organization' | 'case' | 'user';
  side: TagSide;
  createdById: string;
}

type TagLook = Omit<z.output<typeof CreateCaseTagDto>, 'type'>;

/** Inserts a manual tag with its `review.tag.created` event; a name taken in the scope is 409. */
export async function insertTag(scope: NewTagScope, input: TagLook): Promise<TagRow> {
  try {
    return await transaction(async (tx) => {
      const [row] = await tx
        .insert(tags)
        .values({
          organizationId: scope.organizationId,
          caseId: scope.caseId,
          name: input.name,
          nameLowercase: input.name.toLowerCase(),
          type: scope.type,
          origin: 'manual',
          creatorAccessType: scope.side,
          createdById: scope.createdById,
          ...(input.backgroundColor !== undefined ? { backgroundColor: input.backgroundColor } : {}),
          ...(input.textColor !== undefined ? { textColor: input.textColor } : {}),
          ...(input.severity !== undefined ? { severity: input.severity } : {}),
        })
        .returning();
      recordTagEvent(tx, 'review.tag.created', row!, {
        backgroundColor: row!.backgroundColor,
        textColor: row!.textColor,
        severity: row!.severity,
      });
      return row!;
    });
  } catch (error) {
    if (isUniqueViolation(error, ACTIVE_NAME_KEY)) throw new TagNameTakenError(input.name);
    throw error;
  }
}

/**
 * The tag `tagId` among those `addressable` names, locked for the change; 404 when there is none
 * (unknown, or not the caller's to see). `check` then refuses what the route may not change.
 */
async function lockTag(tx: Tx, tagId: string, addressable: SQL, check: (row: TagRow) => void): Promise<TagRow> {
  const [row] = await tx
    .select()
    .from(tags)
    .where(and(idEquals(tags.id, tagId), addressable))
    .for('update');
  if (!row) throw new TagNotFoundError();
  check(row);
  return row;
}

const CHANGEABLE = ['name', 'backgroundColor', 'textColor', 'severity'] as const;

/**
 * Changes a tag's name, colours or severity: only the fields that differ are written, with one
 * `review.tag.updated` event naming them (none when nothing differs). An inactive tag is 409; a
 * name taken in the scope is 409.
 */
export async function changeTag(
  tagId: string,
  addressable: SQL,
  check: (row: TagRow) => void,
  input: z.output<typeof UpdateTagDto>,
): Promise<TagRow> {
  try {
    return await transaction(async (tx) => {
      const current = await lockTag(tx, tagId, addressable, check);
      if (!current.isActive) throw new TagInactiveError();
      const changes: Partial<Pick<TagRow, (typeof CHANGEABLE)[number]>> = {};
      const previous: Record<string, unknown> = {};
      for (const field of CHANGEABLE) {
        const value = input[field];
        if (value === undefined || value === current[field]) continue;
        Object.assign(changes, { [field]: value });
        previous[field] = current[field];
      }
      if (Object.keys(changes).length === 0) return current;
      const [updated] = await tx
        .update(tags)
        .set({ ...changes, ...(changes.name !== undefined ? { nameLowercase: changes.name.toLowerCase() } : {}) })
        .where(eq(tags.id, current.id))
        .returning();
      recordTagEvent(tx, 'review.tag.updated', updated!, { fields: Object.keys(changes), changes, previous });
      return updated!;
    });
  } catch (error) {
    if (isUniqueViolation(error, ACTIVE_NAME_KEY)) throw new TagNameTakenError(input.name ?? '');
    throw error;
  }
}

/**
 * Deactivates a tag (`isActive: false`): every link and its history stay, and the tag still names
 * them. Deleting an inactive tag again answers it unchanged, with no new event.
 */
export async function deactivateTag(tagId: string, addressable: SQL, check: (row: TagRow) => void): Promise<TagRow> {
  return transaction(async (tx) => {
    const current = await lockTag(tx, tagId, addressable, check);
    if (!current.isActive) return current;
    const [updated] = await tx.update(tags).set({ isActive: false }).where(eq(tags.id, current.id)).returning();
    recordTagEvent(tx, 'review.tag.deactivated', updated!);
    return updated!;
  });
}
