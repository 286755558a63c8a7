import { bigint, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { id, timestamptz } from '../columns';
import { organizations } from './organizations';

/**
 * Documents the service generates and keeps for a while (custody and billing-report PDFs), under
 * GENERATED_PREFIX: outside the evidence location and its Object Lock. Each counts in its
 * organization's storage while it exists; a request whose document would cover the same thing
 * (same fingerprint) reuses it until it expires, and maintenance removes expired ones (the object
 * first, then the row). Written only by lib/storage/generated-documents.ts.
 */
export const generatedDocuments = pgTable(
  'generated_documents',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The case the document is about; null for an organization's document (a billing report). No foreign key: it outlives nothing but itself. */
    caseId: uuid('case_id'),
    /** What the document is: 'custody' or 'billing-report'. */
    kind: text('kind').notNull(),
    objectKey: text('object_key').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    /** A hash of what the document covers: a later request with the same fingerprint reuses the document. */
    fingerprint: text('fingerprint').notNull(),
    /** What the answer that hands the document out says about it besides its key (counts, file name). */
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamptz('created_at').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
  },
  (t) => [
    index('generated_documents_fingerprint_idx').on(t.organizationId, t.fingerprint, t.expiresAt),
    index('generated_documents_expiry_idx').on(t.expiresAt),
  ],
);
