import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, timestamptz } from '../columns';
import { cases } from './cases';

export const CUSTODY_EXPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

/** One stored volume of an export: a generated document (lib/storage/generated-documents.ts). */
export interface CustodyExportVolume {
  volume: number;
  documentId: string;
  objectKey: string;
  fileName: string;
  sizeBytes: number;
  items: number;
  events: number;
  expiresAt: string;
}

/**
 * Background exports of a case's custody record as PDF volumes (lib/material/custody-exports):
 * the snapshot they cover (every item imported up to `asOf`, every event up to the chain head),
 * where the next volume starts (the checkpoint) and the volumes stored so far.
 */
export const custodyExports = pgTable(
  'custody_exports',
  {
    ...id,
    organizationId: uuid('organization_id').notNull(),
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    requestedById: uuid('requested_by_id'),
    status: text('status', { enum: CUSTODY_EXPORT_STATUSES }).notNull(),
    /** The case's last audit event but custody reads when started: a start covering the same gets this export. */
    covers: text('covers').notNull(),
    asOf: timestamptz('as_of').notNull(),
    chainHeadSequence: bigint('chain_head_sequence', { mode: 'number' }).notNull(),
    chainHeadHash: text('chain_head_hash').notNull(),
    itemTotal: bigint('item_total', { mode: 'number' }).notNull(),
    eventTotal: bigint('event_total', { mode: 'number' }).notNull(),
    itemsWritten: bigint('items_written', { mode: 'number' }).notNull().default(0),
    eventsWritten: bigint('events_written', { mode: 'number' }).notNull().default(0),
    /** The position after the last item written (custody itemCursor); null before the first. */
    itemCursor: text('item_cursor'),
    /** Items all written: the volumes go on with the events. */
    itemsDone: integer('items_done').notNull().default(0),
    /** The sequence of the last event written. */
    eventCursor: bigint('event_cursor', { mode: 'number' }).notNull().default(0),
    volumes: jsonb('volumes').$type<CustodyExportVolume[]>().notNull().default([]),
    attempts: integer('attempts').notNull().default(0),
    leaseUntil: timestamptz('lease_until'),
    error: jsonb('error').$type<{ code: string; message: string }>(),
    finishedAt: timestamptz('finished_at'),
    ...timestamps,
  },
  (t) => [
    index('custody_exports_case_idx').on(t.caseId, t.createdAt),
    // One export at a time per case and state covered: a second start while it runs gets the first.
    uniqueIndex('custody_exports_one_pending_idx')
      .on(t.caseId, t.covers)
      .where(sql`${t.status} in ('queued', 'running')`),
    index('custody_exports_pending_idx').on(t.status).where(sql`${t.status} in ('queued', 'running')`),
  ],
);
