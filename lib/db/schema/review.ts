import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { boolean } from 'drizzle-orm/pg-core';
import { id, timestamps, timestamptz } from '../columns';
import { cases } from './cases';
import { deviceNotes, emails, networkConversations, supportTickets } from './material';
import { organizations } from './organizations';
import { users } from './users';

/** Who made a tag link or ended it: the contract's AttachedTag `addedBy` and `removedBy`. */
export const TAG_ACTORS = ['user', 'ai', 'auto', 'auto-import', 'system', 'default'] as const;

/** The side a tag belongs to: the firm's (`org`) or opposing counsel's (the contract spells it `opposing_council`). */
export const TAG_SIDES = ['org', 'opposing_council'] as const;

/**
 * Tags: the system's, an organization's, a case's and a user's own (per case). Each belongs to the
 * side that made it (`creatorAccessType`; null for tags the service or an import made, which are
 * the firm's), and each side sees only its own tags and system tags (lib/review/tag-visibility.ts).
 * Deleting deactivates, so history keeps naming the tag.
 */
export const tags = pgTable(
  'tags',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    caseId: uuid('case_id').references(() => cases.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    nameLowercase: text('name_lowercase').notNull(),
    backgroundColor: text('background_color').notNull().default('#E5E7EB'),
    textColor: text('text_color').notNull().default('#111827'),
    type: text('type', { enum: ['system', 'organization', 'case', 'user'] })
      .notNull()
      .default('case'),
    severity: text('severity', { enum: ['info', 'warning', 'danger'] })
      .notNull()
      .default('info'),
    origin: text('origin', { enum: ['manual', 'auto-import'] })
      .notNull()
      .default('manual'),
    creatorAccessType: text('creator_access_type', { enum: TAG_SIDES }),
    /** Who made it; a user tag is seen only by them. Null for system and imported tags. */
    createdById: uuid('created_by_id').references(() => users.id, { onDelete: 'set null' }),
    isActive: boolean('is_active').notNull().default(true),
    ...timestamps,
  },
  (t) => [
    index('tags_organization_idx').on(t.organizationId),
    index('tags_case_idx').on(t.caseId),
    // A name is unique among the active tags of its scope: organization, type, case, side, and for
    // a user tag its creator. Each side has its own names, so a 409 tells nothing of the other's.
    uniqueIndex('tags_active_name_key')
      .on(
        t.organizationId,
        t.type,
        sql`coalesce(case_id, '00000000-0000-0000-0000-000000000000'::uuid)`,
        sql`coalesce(creator_access_type, 'org')`,
        sql`coalesce(case when type = 'user' then created_by_id end, '00000000-0000-0000-0000-000000000000'::uuid)`,
        t.nameLowercase,
      )
      .where(sql`is_active`),
  ],
);

/**
 * The columns of a tag link: one row per time a tag was put on an item, ended by its removal.
 * Adding a removed tag again makes a new row, so every earlier add and removal stays readable
 * (the contract's `attachedTags`); at most one row per item and tag is active.
 */
const tagLinkColumns = () => ({
  ...id,
  tagId: uuid('tag_id')
    .notNull()
    .references(() => tags.id, { onDelete: 'cascade' }),
  addedBy: text('added_by', { enum: TAG_ACTORS }).notNull(),
  addedById: text('added_by_id'),
  removedAt: timestamptz('removed_at'),
  removedBy: text('removed_by', { enum: TAG_ACTORS }),
  removedById: text('removed_by_id'),
  ...timestamps,
});

/** A tag on an email (the contract's attached tag). */
export const emailTags = pgTable(
  'email_tags',
  {
    emailId: uuid('email_id')
      .notNull()
      .references(() => emails.id, { onDelete: 'cascade' }),
    ...tagLinkColumns(),
  },
  (t) => [
    index('email_tags_email_idx').on(t.emailId),
    uniqueIndex('email_tags_active_key').on(t.emailId, t.tagId).where(sql`removed_at is null`),
    index('email_tags_tag_active_idx').on(t.tagId, t.emailId).where(sql`removed_at is null`),
  ],
);

/** A tag on a professional-network conversation (its messages carry it). */
export const networkConversationTags = pgTable(
  'network_conversation_tags',
  {
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => networkConversations.id, { onDelete: 'cascade' }),
    ...tagLinkColumns(),
  },
  (t) => [
    index('network_conversation_tags_conversation_idx').on(t.conversationId),
    uniqueIndex('network_conversation_tags_active_key').on(t.conversationId, t.tagId).where(sql`removed_at is null`),
    index('network_conversation_tags_tag_active_idx').on(t.tagId, t.conversationId).where(sql`removed_at is null`),
  ],
);

/** A tag on a chat-platform support ticket. */
export const supportTicketTags = pgTable(
  'support_ticket_tags',
  {
    ticketId: uuid('ticket_id')
      .notNull()
      .references(() => supportTickets.id, { onDelete: 'cascade' }),
    ...tagLinkColumns(),
  },
  (t) => [
    index('support_ticket_tags_ticket_idx').on(t.ticketId),
    uniqueIndex('support_ticket_tags_active_key').on(t.ticketId, t.tagId).where(sql`removed_at is null`),
    index('support_ticket_tags_tag_active_idx').on(t.tagId, t.ticketId).where(sql`removed_at is null`),
  ],
);

/** A tag on a device note. */
export const deviceNoteTags = pgTable(
  'device_note_tags',
  {
    noteId: uuid('note_id')
      .notNull()
      .references(() => deviceNotes.id, { onDelete: 'cascade' }),
    ...tagLinkColumns(),
  },
  (t) => [
    index('device_note_tags_note_idx').on(t.noteId),
    uniqueIndex('device_note_tags_active_key').on(t.noteId, t.tagId).where(sql`removed_at is null`),
    index('device_note_tags_tag_active_idx').on(t.tagId, t.noteId).where(sql`removed_at is null`),
  ],
);

export const TAGGING_JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

/** A tagging by filter (POST /cases/{caseId}/tagging with `filter`), run in the background in batches. */
export const taggingJobs = pgTable(
  'tagging_jobs',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    createdById: uuid('created_by_id').references(() => users.id, { onDelete: 'set null' }),
    /** The side that asked: it sees only its own jobs, and the filter sees only what that side may. */
    side: text('side', { enum: TAG_SIDES }).notNull(),
    add: uuid('add').array().notNull().default(sql`'{}'::uuid[]`),
    remove: uuid('remove').array().notNull().default(sql`'{}'::uuid[]`),
    filter: jsonb('filter').$type<Record<string, unknown>>().notNull(),
    status: text('status', { enum: TAGGING_JOB_STATUSES }).notNull().default('queued'),
    /** Items the filter matched (known once the job starts), and how many are done. */
    totalItems: integer('total_items'),
    processedItems: integer('processed_items').notNull().default(0),
    /** Links added and removed so far. */
    addedLinks: integer('added_links').notNull().default(0),
    removedLinks: integer('removed_links').notNull().default(0),
    error: text('error'),
    /**
     * Where the run stands: the selector's keyset position after the last committed batch (for the
     * email filter, the last email id). A run taken up again continues after it.
     */
    cursor: text('cursor'),
    startedAt: timestamptz('started_at'),
    finishedAt: timestamptz('finished_at'),
    ...timestamps,
  },
  (t) => [index('tagging_jobs_case_idx').on(t.caseId, t.createdAt)],
);
