import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { id, timestamps, timestamptz } from '../columns';
import { cases, devices } from './cases';
import { organizations } from './organizations';
import { users } from './users';

/** Postgres full-text vector, kept up to date by the database (generated column). */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });
/** Text compared byte by byte, so a btree range finds every string starting with a prefix. */
const byteText = customType<{ data: string }>({ dataType: () => 'text COLLATE "C"' });

export interface EmailAddress {
  name?: string;
  email?: string;
}

export const emailThreads = pgTable(
  'email_threads',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    /** Message-ID of the thread's root, the key importers thread by. */
    rootMessageId: text('root_message_id').notNull(),
    subject: text('subject'),
    participants: text('participants').array().notNull().default(sql`'{}'::text[]`),
    messageCount: integer('message_count').notNull().default(0),
    lastMessageAt: timestamptz('last_message_at'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('email_threads_case_root_key').on(t.caseId, t.rootMessageId),
    index('email_threads_case_activity_idx').on(t.caseId, t.lastMessageAt),
    // The thread list's default order (newest activity first, threads without one last): its first
    // page read from the index instead of sorting every thread of the case (issue 35).
    index('email_threads_case_latest_idx').on(t.caseId, t.lastMessageAt.desc().nullsLast(), t.id.desc().nullsFirst()),
  ],
);

export const emails = pgTable(
  'emails',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => emailThreads.id, { onDelete: 'cascade' }),
    /** The mailbox the evidence came from (import source id). */
    grantId: text('grant_id').notNull(),
    /** Message-ID header; unique per case, so a re-import adds nothing twice. */
    externalId: text('external_id').notNull(),
    sourceEmail: text('source_email').notNull(),
    subject: text('subject'),
    body: text('body'),
    snippet: text('snippet'),
    object: text('object'),
    date: timestamptz('date'),
    from: jsonb('from').$type<EmailAddress[]>().notNull().default([]),
    to: jsonb('to').$type<EmailAddress[]>().notNull().default([]),
    cc: jsonb('cc').$type<EmailAddress[]>().notNull().default([]),
    bcc: jsonb('bcc').$type<EmailAddress[]>().notNull().default([]),
    replyTo: jsonb('reply_to').$type<EmailAddress[]>().notNull().default([]),
    folders: text('folders').array().notNull().default(sql`'{}'::text[]`),
    starred: boolean('starred').notNull().default(false),
    unread: boolean('unread').notNull().default(false),
    threadIndex: integer('thread_index').notNull().default(0),
    /** Lowercased addresses and domains of from/to/cc/bcc: filters use GIN indexes, not scans. */
    participantEmails: text('participant_emails').array().notNull().default(sql`'{}'::text[]`),
    participantDomains: text('participant_domains').array().notNull().default(sql`'{}'::text[]`),
    inReplyTo: text('in_reply_to'),
    /**
     * Subject and body, searchable by the case search (lib/review/search). The body counts up to
     * its first 200,000 characters: a tsvector holds at most 1 MB, and a longer body would refuse
     * the email.
     */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(sql`to_tsvector('simple', coalesce(subject, '') || ' ' || left(coalesce(body, ''), 200000))`),
    /** SHA-256 (hex) and size of the item's source bytes at import (lib/material/evidence-hash.ts). */
    sha256: text('sha256'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    /** Where it came from: the imported file's name. */
    importSource: text('import_source'),
    importedById: uuid('imported_by_id'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('emails_case_external_key').on(t.caseId, t.externalId),
    index('emails_thread_date_idx').on(t.threadId, t.date),
    index('emails_participant_domains_idx').using('gin', t.participantDomains),
    index('emails_participant_emails_idx').using('gin', t.participantEmails),
    index('emails_folders_idx').using('gin', t.folders),
    // The custody record's order (lib/material/custody.ts): keyset pages walk it.
    index('emails_case_custody_idx').on(t.caseId, t.createdAt, t.id),
    index('emails_search_idx').using('gin', t.search).with({ gin_pending_list_limit: 256 }),
  ],
);

export const attachments = pgTable(
  'attachments',
  {
    ...id,
    emailId: uuid('email_id')
      .notNull()
      .references(() => emails.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    providerId: text('provider_id').notNull(),
    convertedName: text('converted_name'),
    convertedProviderId: text('converted_provider_id').notNull().default(''),
    provider: text('provider').notNull().default('s3'),
    size: bigint('size', { mode: 'number' }).notNull(),
    transferState: integer('transfer_state'),
    /** SHA-256 (hex) of the attachment's bytes at import. */
    sha256: text('sha256'),
    ...timestamps,
  },
  (t) => [index('attachments_email_idx').on(t.emailId)],
);

/**
 * A profile whose evidence was collected (professional network or chat platform). Visibility
 * to opposing counsel is explicit: only profiles marked visible are shown to them.
 */
export const materialProfiles = pgTable(
  'material_profiles',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    platform: text('platform', { enum: ['professional_network', 'chat_platform'] }).notNull(),
    externalId: text('external_id').notNull(),
    name: text('name').notNull(),
    visibleToOpposingCounsel: boolean('visible_to_opposing_counsel').notNull().default(false),
    ...timestamps,
  },
  (t) => [uniqueIndex('material_profiles_case_platform_external_key').on(t.caseId, t.platform, t.externalId)],
);

export const networkConversations = pgTable(
  'network_conversations',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    profileId: uuid('profile_id')
      .notNull()
      .references(() => materialProfiles.id, { onDelete: 'cascade' }),
    externalId: text('external_id').notNull(),
    title: text('title'),
    participants: text('participants').array().notNull().default(sql`'{}'::text[]`),
    ...timestamps,
  },
  (t) => [uniqueIndex('network_conversations_profile_external_key').on(t.profileId, t.externalId)],
);

export const networkMessages = pgTable(
  'network_messages',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => networkConversations.id, { onDelete: 'cascade' }),
    profileId: uuid('profile_id')
      .notNull()
      .references(() => materialProfiles.id, { onDelete: 'cascade' }),
    /** Stable key of the message in its export (hash of its fields), so re-imports add nothing twice. */
    externalId: text('external_id').notNull(),
    from: text('from').notNull(),
    to: text('to').notNull(),
    date: timestamptz('date').notNull(),
    subject: text('subject'),
    content: text('content').notNull(),
    folder: text('folder'),
    isDraft: boolean('is_draft').notNull().default(false),
    attachments: text('attachments').notNull().default(''),
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(sql`to_tsvector('simple', coalesce(subject, '') || ' ' || content)`),
    /** SHA-256 (hex) and size of the item's source bytes at import (lib/material/evidence-hash.ts). */
    sha256: text('sha256'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    /** Where it came from: the imported file's name. */
    importSource: text('import_source'),
    importedById: uuid('imported_by_id'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('network_messages_conversation_external_key').on(t.conversationId, t.externalId),
    index('network_messages_case_date_idx').on(t.caseId, t.date),
    index('network_messages_case_custody_idx').on(t.caseId, t.createdAt, t.id),
    // A small pending list: every search scans the whole list until it is merged into the tree, and
    // after a bulk import the default (4 MB) left ~15,000 messages there; still merged in batches.
    index('network_messages_search_idx').using('gin', t.search).with({ gin_pending_list_limit: 256 }),
  ],
);

/**
 * Every lexeme of network_messages.search, of any case, but those starting with a digit, filled by
 * a statement trigger on insert and update (migration 0015); never pruned, so it may hold more.
 * The search turns a word prefix into the few exact lexemes it covers, which the GIN index reads
 * far faster than a prefix match (lib/material/text-search.ts).
 */
export const networkMessageLexemes = pgTable('network_message_lexemes', {
  lexeme: byteText('lexeme').primaryKey(),
});

export const supportTickets = pgTable(
  'support_tickets',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    profileId: uuid('profile_id')
      .notNull()
      .references(() => materialProfiles.id, { onDelete: 'cascade' }),
    ticketId: bigint('ticket_id', { mode: 'number' }).notNull(),
    subject: text('subject'),
    status: text('status'),
    ticketCreatedAt: timestamptz('ticket_created_at'),
    comments: jsonb('comments')
      .$type<Array<{ author: string; comment: string; createdAt: string }>>()
      .notNull()
      .default([]),
    /**
     * Subject and every comment's text, searchable. The comments are indexed as JSON string values
     * (jsonb_to_tsvector), not as the array's JSON text, where a line break reads `\n` and glues
     * an `n` to the next word.
     */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(
        sql`to_tsvector('simple', coalesce(subject, '')) || jsonb_to_tsvector('simple', jsonb_path_query_array(comments, '$[*].comment'), '["string"]')`,
      ),
    /** SHA-256 (hex) and size of the item's source bytes at import (lib/material/evidence-hash.ts). */
    sha256: text('sha256'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    /** Where it came from: the imported file's name. */
    importSource: text('import_source'),
    importedById: uuid('imported_by_id'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('support_tickets_profile_ticket_key').on(t.profileId, t.ticketId),
    // The ticket list's default order (oldest first, tickets without a time last): its first page
    // read from the index instead of sorting every ticket of the profile (issue 35).
    index('support_tickets_profile_created_idx').on(t.profileId, t.ticketCreatedAt, t.ticketId),
    index('support_tickets_search_idx').using('gin', t.search),
    index('support_tickets_case_custody_idx').on(t.caseId, t.createdAt, t.id),
  ],
);

/** Notes pulled off a device by the desktop extractor, per case; re-importing a note id adds nothing. */
export const deviceNotes = pgTable(
  'device_notes',
  {
    ...id,
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    noteId: bigint('note_id', { mode: 'number' }).notNull(),
    title: text('title').notNull(),
    summary: text('summary'),
    noteCreatedAt: text('note_created_at'),
    noteModifiedAt: text('note_modified_at'),
    htmlContent: text('html_content'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    attachmentKeys: text('attachment_keys').array().notNull().default(sql`'{}'::text[]`),
    importedById: uuid('imported_by_id').references(() => users.id, { onDelete: 'set null' }),
    /** Title, summary and the text of the HTML content (tags dropped; its first 200,000 characters), for the case search. */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(
        sql`to_tsvector('simple', title || ' ' || coalesce(summary, '') || ' ' || left(regexp_replace(coalesce(html_content, ''), '<[^>]*>', ' ', 'g'), 200000))`,
      ),
    /** SHA-256 (hex) and size of the note as sent (its canonical JSON, lib/material/evidence-hash.ts). */
    sha256: text('sha256'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('device_notes_case_device_note_key').on(t.caseId, t.deviceId, t.noteId),
    index('device_notes_case_custody_idx').on(t.caseId, t.createdAt, t.id),
    index('device_notes_search_idx').using('gin', t.search),
  ],
);

/** Each use of an extraction code by the desktop extractor, for the organization report. */
export const extractionAttempts = pgTable(
  'extraction_attempts',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    extractionCodeId: uuid('extraction_code_id'),
    deviceId: text('device_id'),
    outcome: text('outcome', { enum: ['success', 'failed', 'cancelled'] }).notNull(),
    ...timestamps,
  },
  (t) => [index('extraction_attempts_organization_idx').on(t.organizationId)],
);

/**
 * A self-serve evidence import (issue 17): an uploaded export imported in the background, in
 * batches, each committing its items with the progress and checkpoint below.
 */
export const evidenceImports = pgTable(
  'evidence_imports',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['email', 'professional-network', 'chat-platform'] }).notNull(),
    fileName: text('file_name').notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    profile: text('profile'),
    /** The case's source evidence (cases/{caseId}/imports/...): no link covers it; the worker reads only it. */
    objectKey: text('object_key').notNull(),
    /**
     * Where the upload link puts the file (staging/cases/{caseId}/imports/...); null for a file the
     * admin command stored as evidence itself. The worker copies it into objectKey once, hashing.
     */
    stagingKey: text('staging_key'),
    /**
     * The multipart upload of a file sent in parts (S3's UploadId; locally the parts directory's id);
     * null for a file sent in one PUT. /start completes it, cancel aborts it.
     */
    multipartUploadId: text('multipart_upload_id'),
    /** The upload's version when the import started: the worker copies only those bytes (UPLOAD_CHANGED otherwise). */
    stagedVersion: text('staged_version'),
    /** The evidence object's version the worker wrote: every later read pins it. */
    evidenceVersion: text('evidence_version'),
    /** SHA-256 of exactly the bytes imported, taken as they were copied into evidence; every later run re-checks it. */
    sha256: text('sha256'),
    /**
     * The segment size of an evidence copy made in segments (a file larger than one segment): each
     * segment's SHA-256 is in evidence_import_segments, and later runs check each segment they read.
     * Null: copied in one step, the whole file is the one segment (checked against sha256).
     */
    copySegmentBytes: bigint('copy_segment_bytes', { mode: 'number' }),
    /** The copy's checkpoint while it runs: the evidence key's multipart upload, bytes copied, the hash state. */
    copyUploadId: text('copy_upload_id'),
    copiedBytes: bigint('copied_bytes', { mode: 'number' }).notNull().default(0),
    copyHashState: text('copy_hash_state'),
    status: text('status', { enum: ['awaiting_upload', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] })
      .notNull()
      .default('awaiting_upload'),
    /** When it joined the queue (start, retry, pause): imports of one organization run one at a time in this order. */
    queuedAt: timestamptz('queued_at'),
    /** Runs that ended without finishing (the worker lost, or an unexpected error): bounded by MAX_IMPORT_ATTEMPTS. */
    attempts: integer('attempts').notNull().default(0),
    /** The checkpoint: where the next batch starts (byte offset of the file, items before it). */
    bytesRead: bigint('bytes_read', { mode: 'number' }).notNull().default(0),
    itemsRead: integer('items_read').notNull().default(0),
    itemsImported: integer('items_imported').notNull().default(0),
    itemsSkipped: integer('items_skipped').notNull().default(0),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    errorItemIndex: integer('error_item_index'),
    /** A running worker holds the import until then; a lapsed lease (a crashed worker) lets the next one resume. */
    leaseUntil: timestamptz('lease_until'),
    createdById: uuid('created_by_id').references(() => users.id, { onDelete: 'set null' }),
    startedAt: timestamptz('started_at'),
    finishedAt: timestamptz('finished_at'),
    ...timestamps,
  },
  (t) => [
    index('evidence_imports_case_idx').on(t.caseId, t.createdAt),
    index('evidence_imports_pending_idx').on(t.status).where(sql`${t.status} in ('queued', 'running')`),
    // At most one running import per organization: one firm's export never holds two worker slots.
    uniqueIndex('evidence_imports_one_running_idx').on(t.organizationId).where(sql`${t.status} = 'running'`),
  ],
);

/**
 * The segments of an evidence copy made in segments (evidence_imports.copy_segment_bytes): each
 * segment's SHA-256, taken as it was copied, and the ETag of the evidence upload's part it became.
 */
export const evidenceImportSegments = pgTable(
  'evidence_import_segments',
  {
    importId: uuid('import_id')
      .notNull()
      .references(() => evidenceImports.id, { onDelete: 'cascade' }),
    /** 0-based: the segment's bytes are [segment * copy_segment_bytes, +copy_segment_bytes). */
    segment: integer('segment').notNull(),
    sha256: text('sha256').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    partEtag: text('part_etag').notNull(),
  },
  (t) => [primaryKey({ columns: [t.importId, t.segment] })],
);
