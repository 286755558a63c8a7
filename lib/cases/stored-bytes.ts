import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { cases } from '../db/schema/cases';

/**
 * A case's stored bytes (`cases.storage_bytes`, the objects its evidence keeps, and
 * `cases.row_bytes`, the rows derived from its files), counted into the plan's storage. The cases
 * domain owns the `cases` table; the importers and uploads count what they keep through here,
 * inside their own transaction, under the allowance lock they took first.
 */

/** Adds `objectBytes` of stored objects and, when given, `rowBytes` of rows to the case's counts. */
export async function countStoredBytes(
  tx: Tx,
  caseId: string,
  added: { objectBytes: number; rowBytes?: number },
): Promise<void> {
  await tx
    .update(cases)
    .set({
      storageBytes: sql`${cases.storageBytes} + ${added.objectBytes}`,
      ...(added.rowBytes === undefined ? {} : { rowBytes: sql`${cases.rowBytes} + ${added.rowBytes}` }),
    })
    .where(eq(cases.id, caseId));
}

/** Takes back `objectBytes` counted for objects the case never kept (a cancelled import); never below zero. */
export async function uncountObjectBytes(tx: Tx, caseId: string, objectBytes: number): Promise<void> {
  await tx
    .update(cases)
    .set({ storageBytes: sql`greatest(${cases.storageBytes} - ${objectBytes}, 0)` })
    .where(eq(cases.id, caseId));
}
