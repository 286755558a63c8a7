import { type SQL, sql } from 'drizzle-orm';
import type { TaggingItemKind } from '../../../schemas/review/tagging';
import { deviceNotes, emails, materialProfiles, networkConversations, supportTickets } from '../../db/schema/material';
import { deviceNoteTags, emailTags, networkConversationTags, supportTicketTags } from '../../db/schema/review';
import type { TagSide } from '../tag-visibility';

/** Per item kind: its table, its link table and the link's item column (as SQL identifiers). */
export const ITEM_TABLES = {
  email: { items: emails, links: emailTags, itemColumn: sql.identifier('email_id'), profiled: false },
  'network-conversation': {
    items: networkConversations,
    links: networkConversationTags,
    itemColumn: sql.identifier('conversation_id'),
    profiled: true,
  },
  'support-ticket': {
    items: supportTickets,
    links: supportTicketTags,
    itemColumn: sql.identifier('ticket_id'),
    profiled: true,
  },
  'device-note': { items: deviceNotes, links: deviceNoteTags, itemColumn: sql.identifier('note_id'), profiled: false },
} as const satisfies Record<TaggingItemKind, unknown>;

/**
 * Which items of a kind a side may see in a case: every email; network conversations and support
 * tickets only of profiles shown to opposing counsel; no device notes for opposing counsel (the
 * contract has no read of them for that side). `item` names the row of the kind's table.
 */
export function visibleItem(kind: TaggingItemKind, side: TagSide, caseId: string): SQL {
  const { items } = ITEM_TABLES[kind];
  const inCase = sql`${items.caseId} = ${caseId}`;
  if (side === 'org') return inCase;
  if (kind === 'email') return inCase;
  if (kind === 'device-note') return sql`false`;
  const profileId = kind === 'network-conversation' ? networkConversations.profileId : supportTickets.profileId;
  return sql`${inCase} and exists (select 1 from ${materialProfiles} where ${materialProfiles.id} = ${profileId} and ${materialProfiles.visibleToOpposingCounsel})`;
}
