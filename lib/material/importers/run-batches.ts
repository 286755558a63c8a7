import { type Column, getTableColumns, type SQL, sql, type Table } from 'drizzle-orm';
import { type AuditEventInput, recordAudit } from '../../audit/record';
import { countStoredBytes } from '../../cases/stored-bytes';
import type { Tx } from '../../db/client';
import { rawRows } from '../../db/raw-rows';
import { transaction } from '../../db/transaction';
import { newId } from '../../ids';
import type { PlanUsage } from '../../organizations/active-plan';
import { assertStorageFits, lockAllowances } from '../../organizations/allowances';
import {
  type BatchCounts,
  MalformedImportError,
  type ReadItem,
  type StreamImportOptions,
  type StreamImportResult,
} from './batch';

/**
 * Writes one batch in one transaction, calling `onBatch` inside it with the batch's counts and
 * checkpoint (`batch.at(-1).next`). It may commit a prefix of the batch and then throw (a storage
 * refusal): the prefix's checkpoint is then the import's.
 */
export type CommitBatch<T> = (batch: ReadItem<T>[], firstItemIndex: number) => Promise<BatchCounts>;

export interface BatchLimits<T> {
  /** Items per batch. */
  size: number;
  /** A batch also closes once its items weigh this much (bytes held in memory until it commits). */
  maxWeight?: number;
  weigh?(item: T): number;
}

/** The batch size to use: the caller's, else the importer's default. */
export function batchSizeOf(options: StreamImportOptions, fallback: number): number {
  const size = options.batchSize ?? fallback;
  if (!Number.isSafeInteger(size) || size < 1) throw new Error(`Batch size must be a positive integer, not ${size}`);
  return size;
}

/**
 * Inserts `rows` into `table` in one statement whatever their number; a row that conflicts with
 * one already there is skipped (`ON CONFLICT DO NOTHING`) unless `onConflict` says otherwise.
 * Returns the `returning` columns of the rows written. The rows travel as one JSON parameter that
 * jsonb_to_recordset expands: no per-row parameters, so no 65,535-parameter limit, and none of the
 * cost of building a VALUES list of thousands of parameters (measured: it was the largest part of
 * a batch's time in Node). Each row has the table's column keys; a column the rows leave out takes
 * its default (drizzle's, else the database's). Values go as JSON.stringify writes them: a Date as
 * ISO text, a jsonb value nested, a text[] as an array.
 */
export async function insertRows<T extends Table, R extends Record<string, Column> = Record<never, Column>>(
  tx: Tx,
  table: T,
  rows: Array<T['$inferInsert']>,
  options: { returning?: R; onConflict?: SQL } = {},
): Promise<Array<{ [K in keyof R]: string }>> {
  if (rows.length === 0) return [];
  const first = rows[0] as Record<string, unknown>;
  const columns = Object.entries(getTableColumns(table) as Record<string, Column>).filter(
    ([key, column]) => !column.generated && (key in first || column.defaultFn),
  );
  const records = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const [key, column] of columns) {
      const value = (row as Record<string, unknown>)[key];
      record[column.name] = value !== undefined ? value : (column.defaultFn?.() ?? null);
    }
    return record;
  });
  const names = sql.join(
    columns.map(([, column]) => sql.identifier(column.name)),
    sql`, `,
  );
  const types = sql.raw(columns.map(([, column]) => `"${column.name}" ${column.getSQLType()}`).join(', '));
  const returned = Object.entries(options.returning ?? {});
  const returning = returned.length
    ? sql` returning ${sql.join(
        returned.map(([key, column]) => sql`${sql.identifier(column.name)} as ${sql.identifier(key)}`),
        sql`, `,
      )}`
    : sql``;
  return rawRows<{ [K in keyof R]: string }>(
    tx,
    sql`insert into ${table} (${names}) select ${names} from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as batch(${types}) ${options.onConflict ?? sql`on conflict do nothing`}${returning}`,
  );
}

/**
 * What one row of each kind of item takes in the database beyond its stored text (storedTextBytes):
 * the row's other columns and header, its indexes (full-text ones included), its share of its
 * thread or conversation and of the batch's audit event. Measured on the PostgreSQL server
 * (pg_total_relation_size of the evidence tables and their indexes before and after importing
 * items of each kind, less their stored text, per item); the figures are in docs/decisions.md
 * ("Issue 29: storage counts what we keep").
 */
export const ROW_OVERHEAD_BYTES = {
  /** Measured 413 to 438 (5,000 one-line messages, ten to a thread). */
  email: 440,
  /** Measured 375 to 419 (5,000 one-line messages, 50 conversations). */
  networkMessage: 420,
  /** Measured 280 to 300 (5,000 tickets of one comment). */
  supportTicket: 300,
  /** Measured 289 to 296 (5,000 one-line notes of one device). */
  deviceNote: 300,
} as const;

export type RowKind = keyof typeof ROW_OVERHEAD_BYTES;

/** The bytes an item's content takes as stored text: the UTF-8 length of its JSON. */
export function storedTextBytes(content: unknown): number {
  return Buffer.byteLength(JSON.stringify(content));
}

/** What `items` items of `kind` with `textBytes` of stored text count in the plan's storage. */
export function rowBytesOf(kind: RowKind, items: number, textBytes: number): number {
  return textBytes + items * ROW_OVERHEAD_BYTES[kind];
}

/**
 * Inserts one batch's items (insertRows: one statement, a row already there skipped) and measures
 * what the written ones hold: each item's `content` is what its stored text is counted from
 * (storedTextBytes). Rows without an id get one here, so the written rows are known by the ids
 * returned. Returns those ids and the stored text of their items.
 */
export async function insertItems<T extends Table & { id: Column }>(
  tx: Tx,
  table: T,
  items: Array<{ row: T['$inferInsert']; content: unknown }>,
  options: { onConflict?: SQL } = {},
): Promise<{ ids: string[]; textBytes: number }> {
  const textOf = new Map<string, number>();
  const rows = items.map(({ row, content }) => {
    const id = ((row as { id?: string }).id ?? newId()) as string;
    textOf.set(id, storedTextBytes(content));
    return { ...row, id };
  });
  const written = await insertRows(tx, table, rows, { ...options, returning: { id: table.id } });
  const ids = written.map((row) => row.id);
  return { ids, textBytes: ids.reduce((sum, id) => sum + (textOf.get(id) ?? 0), 0) };
}

/**
 * One batch's transaction, the allowance lock taken first (the organization's plan row, before the
 * batch writes the case's rows: the lock order of lib/organizations/allowances.ts), so what the
 * batch adds is counted against the plan's storage under it (countBatch).
 */
export function batchTransaction<R>(
  options: StreamImportOptions,
  work: (tx: Tx, usage: PlanUsage) => Promise<R>,
): Promise<R> {
  return transaction(async (tx) => work(tx, await lockAllowances(tx, options.target.organizationId)));
}

/**
 * Counts what a batch added on its case, in one statement, under the allowance lock its
 * transaction took first (batchTransaction): `objectBytes` of stored objects (attachments) and
 * `rowBytes` of rows (rowBytesOf). When they do not fit in the plan's storage the batch fails with
 * 403 STORAGE_LIMIT_REACHED and rolls back whole: what earlier batches committed stays, and the
 * import stops at this batch's first item.
 */
export async function countBatch(
  tx: Tx,
  caseId: string,
  usage: PlanUsage,
  added: { objectBytes?: number; rowBytes: number },
): Promise<void> {
  const objectBytes = added.objectBytes ?? 0;
  assertStorageFits(usage, objectBytes + added.rowBytes);
  if (objectBytes === 0 && added.rowBytes === 0) return;
  await countStoredBytes(tx, caseId, { objectBytes, rowBytes: added.rowBytes });
}

/**
 * Reads `items` and commits them in batches (`commit`, one transaction each). The next batch is
 * read and parsed while the previous one commits, and starts committing only once that one is in,
 * so every batch sees what the batches before it wrote. `shouldPause` is asked after each commit;
 * true stops the read there (the result is not finished, its position the last checkpoint).
 *
 * A malformed item (MalformedImportError from `items`) first commits the valid items read before it
 * as a last batch, then is thrown: what the file holds up to the bad item is in, and the progress
 * names it exactly. Any other error is thrown as it is, once no commit is running.
 */
export async function importInBatches<T>(
  options: StreamImportOptions,
  items: AsyncIterable<ReadItem<T>>,
  limits: BatchLimits<T>,
  commit: CommitBatch<T>,
): Promise<StreamImportResult> {
  const totals: BatchCounts = { read: 0, imported: 0, skipped: 0 };
  let position = options.from;
  let inFlight: Promise<void> | null = null;
  // Set when the commit in flight has settled with a pause or an error: the read stops at the next item.
  let stopping = false;
  let paused = false;

  const start = (batch: ReadItem<T>[]) => {
    const committing = commit(batch, batch[0]!.next.itemIndex - 1).then((counts) => {
      totals.read += counts.read;
      totals.imported += counts.imported;
      totals.skipped += counts.skipped;
      position = batch.at(-1)!.next;
      if (options.shouldPause?.()) {
        paused = true;
        stopping = true;
      }
    });
    // settle() awaits it; this only marks a failure early (and keeps it from counting as unhandled meanwhile).
    committing.catch(() => {
      stopping = true;
    });
    inFlight = committing;
  };
  const settle = async () => {
    const committing = inFlight;
    inFlight = null;
    await committing;
  };
  const result = (finished: boolean): StreamImportResult => ({ ...totals, finished, position });

  let batch: ReadItem<T>[] = [];
  let weight = 0;
  try {
    for await (const read of items) {
      if (stopping) {
        await settle();
        return result(false);
      }
      batch.push(read);
      weight += limits.weigh?.(read.item) ?? 0;
      if (batch.length >= limits.size || (limits.maxWeight !== undefined && weight >= limits.maxWeight)) {
        await settle();
        if (paused) return result(false);
        start(batch);
        batch = [];
        weight = 0;
      }
    }
  } catch (error) {
    // The commit in flight goes first: it holds items before the failing one, and its own failure comes first.
    await settle();
    if (error instanceof MalformedImportError && batch.length > 0) {
      start(batch);
      await settle();
    }
    throw error;
  }
  await settle();
  if (batch.length === 0) return result(true);
  if (paused) return result(false);
  start(batch);
  await settle();
  return result(true);
}

/**
 * How every batch ends, inside its transaction once its rows are written: its counts, one
 * `evidence.*.imported` event when it added items (the file, the profile, the import, where the
 * batch starts in the file, `metadata` of the kind's own), then the caller's `onBatch` with the
 * batch's checkpoint, so the job's progress commits with the rows.
 */
export async function endBatch(
  tx: Tx,
  options: StreamImportOptions,
  batch: ReadItem<unknown>[],
  event: Pick<AuditEventInput, 'action' | 'target'> & {
    firstItemIndex: number;
    imported: number;
    metadata?: Record<string, unknown>;
  },
): Promise<BatchCounts> {
  const { caseId, organizationId, importSource, profileName, importId } = options.target;
  const counts = { read: batch.length, imported: event.imported, skipped: batch.length - event.imported };
  if (counts.imported > 0)
    recordAudit(tx, {
      action: event.action,
      organizationId,
      caseId,
      ...(event.target ? { target: event.target } : {}),
      metadata: {
        file: importSource,
        ...(profileName ? { profile: profileName } : {}),
        ...(importId ? { importId } : {}),
        firstItemIndex: event.firstItemIndex,
        ...counts,
        ...event.metadata,
      },
    });
  await options.onBatch?.(tx, { ...counts, next: batch.at(-1)!.next });
  return counts;
}
