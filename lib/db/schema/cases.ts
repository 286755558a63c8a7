import { bigint, index, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid, boolean } from 'drizzle-orm/pg-core';
import { CASE_ACCESS_LEVELS } from '../../cases/rules';
import { DEVICE_TYPES } from '../../organizations/device-types';
import { id, timestamps, timestamptz } from '../columns';
import { organizations } from './organizations';
import { users } from './users';

/** A case of an organization. Evidence tables hang off it (case-material issue). */
export const cases = pgTable(
  'cases',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Pro as last set; read it through isProNow (lib/cases/pro-status.ts), which honours proUntil. */
    isPro: boolean('is_pro').notNull().default(false),
    /**
     * Why the case is (or was) Pro: 'paid', a Pro upgrade paid for it (kept for good); 'plan', a
     * Pro-including plan (Pro lasts while that plan is in force and paid). Null before any upgrade.
     */
    proSource: text('pro_source', { enum: ['paid', 'plan'] }),
    /** Pro through a plan whose fee is still unpaid ends at this time (the end of its days to pay). */
    proUntil: timestamptz('pro_until'),
    /** Bytes of evidence stored for the case, kept up to date by the importers. */
    storageBytes: bigint('storage_bytes', { mode: 'number' }).notNull().default(0),
    /**
     * Bytes of the rows derived from the case's files (emails, network messages, support tickets,
     * device notes): their stored text plus a fixed per-item overhead (ROW_OVERHEAD_BYTES, lib/material/importers/run-batches.ts).
     * Kept apart from storageBytes (the objects), counted with it in the plan's storage.
     */
    rowBytes: bigint('row_bytes', { mode: 'number' }).notNull().default(0),
    archivedAt: timestamptz('archived_at'),
    deletedAt: timestamptz('deleted_at'),
    ...timestamps,
  },
  (t) => [index('cases_organization_idx').on(t.organizationId)],
);

export const caseAccess = pgTable(
  'case_access',
  {
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    access: text('access', { enum: CASE_ACCESS_LEVELS }).notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.caseId, t.userId] }), index('case_access_user_idx').on(t.userId)],
);

/** Devices registered by the desktop extractor; each counts against the plan's device allowance. */
export const devices = pgTable(
  'devices',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    deviceId: text('device_id').notNull(),
    deviceType: text('device_type', { enum: DEVICE_TYPES }).notNull(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
  },
  (t) => [uniqueIndex('devices_organization_device_key').on(t.organizationId, t.deviceId)],
);
