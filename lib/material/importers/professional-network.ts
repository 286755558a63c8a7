import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client';
import { networkConversations, networkMessages } from '../../db/schema/material';
import type { StreamImportOptions, StreamImportResult, ReadItem } from './batch';
import type { ImportSummary } from './email';
import { importFileIntoProfile, importIntoProfile, type ProfileImporter } from './profile-import';
import { type NetworkMessage, readNetworkMessages } from './readers/messages-csv';
import { insertItems, insertRows } from './run-batches';

/** Rows per batch: measured on the bench export (1,000,000 rows), where larger batches stop paying. */
const DEFAULT_BATCH_SIZE = 2_000;

/** A batch's conversations (participants merged, title filled), then its messages. */
async function writeRows(
  tx: Tx,
  options: StreamImportOptions,
  profileId: string,
  batch: ReadItem<NetworkMessage>[],
): Promise<{ ids: string[]; textBytes: number }> {
  const { caseId, importSource, importedById } = options.target;
  const conversations = new Map<string, { title: string | null; participants: Set<string> }>();
  for (const { item } of batch) {
    const conversation = conversations.get(item.conversationId);
    if (!conversation)
      conversations.set(item.conversationId, {
        title: item.conversationTitle || null,
        participants: new Set(item.participants),
      });
    else {
      conversation.title ||= item.conversationTitle || null;
      for (const participant of item.participants) conversation.participants.add(participant);
    }
  }
  const upserted = await insertRows(
    tx,
    networkConversations,
    [...conversations].map(([externalId, conversation]) => ({
      caseId,
      profileId,
      externalId,
      title: conversation.title,
      participants: [...conversation.participants],
    })),
    {
      // Every conversation of the batch comes back, new or not; what the batch adds to it merges in.
      onConflict: sql`on conflict (${sql.identifier(networkConversations.profileId.name)}, ${sql.identifier(networkConversations.externalId.name)}) do update set ${sql.identifier(networkConversations.participants.name)} = array(select distinct unnest(${networkConversations.participants} || excluded.participants)), ${sql.identifier(networkConversations.title.name)} = coalesce(${networkConversations.title}, excluded.title)`,
      returning: { id: networkConversations.id, externalId: networkConversations.externalId },
    },
  );
  const idOf = new Map(upserted.map((c) => [c.externalId, c.id]));
  return insertItems(
    tx,
    networkMessages,
    batch.map(({ item }) => {
      // The file and the importer are the target's; the message's stored text counts them too.
      const values = { ...item.values, importSource, importedById };
      return { row: { ...values, caseId, profileId, conversationId: idOf.get(item.conversationId)! }, content: values };
    }),
  );
}

const NETWORK_MESSAGES: ProfileImporter<NetworkMessage> = {
  kind: 'professional-network',
  platform: 'professional_network',
  read: readNetworkMessages,
  batchSize: DEFAULT_BATCH_SIZE,
  rowKind: 'networkMessage',
  action: 'evidence.network_messages.imported',
  write: writeRows,
};

/**
 * Imports the professional network's data-export messages.csv (CONVERSATION ID, CONVERSATION
 * TITLE, FROM, TO, DATE, SUBJECT, CONTENT, FOLDER, ATTACHMENTS, ...) into conversations and
 * messages of one profile of the case (`target.profileName`), streaming the file through
 * csv-parse and committing in batches (see importInBatches). Each message is keyed by a hash of
 * its fields, so importing the same export again, or resuming one, adds nothing twice.
 *
 * Each message's evidence hash is over the RFC 8785 canonical JSON of its row as the file has it:
 * an object from each header, as written (only a byte-order mark removed), to the row's value
 * (columns past the header's are dropped, as for the import). Each batch that adds messages
 * records one `evidence.network_messages.imported` event.
 */
export async function importNetworkMessagesStream(options: StreamImportOptions): Promise<StreamImportResult> {
  return importIntoProfile(NETWORK_MESSAGES, options);
}

/** Imports a local messages.csv into a profile of a case at once (streamed, committed in batches). */
export async function importNetworkMessagesCsv(
  caseId: string,
  file: string,
  profileName: string,
): Promise<ImportSummary> {
  return importFileIntoProfile(NETWORK_MESSAGES, caseId, file, profileName);
}
