import type { Tx } from '../../db/client';
import { supportTickets } from '../../db/schema/material';
import type { ReadItem, StreamImportOptions, StreamImportResult } from './batch';
import type { ImportSummary } from './email';
import { importFileIntoProfile, importIntoProfile, type ProfileImporter } from './profile-import';
import { readTickets, type TicketRecord } from './readers/tickets-json';
import { insertItems } from './run-batches';

/** Tickets per batch: each carries its comments, so fewer than the network's rows. */
const DEFAULT_BATCH_SIZE = 500;

/** A batch's tickets; a ticket already there (same ticket id for the profile) is skipped. */
function writeTickets(
  tx: Tx,
  options: StreamImportOptions,
  profileId: string,
  batch: ReadItem<TicketRecord>[],
): Promise<{ ids: string[]; textBytes: number }> {
  const { caseId, importSource, importedById } = options.target;
  return insertItems(
    tx,
    supportTickets,
    batch.map(({ item }) => ({
      row: { ...item.values, caseId, profileId, importSource, importedById },
      content: item.values,
    })),
  );
}

const SUPPORT_TICKETS: ProfileImporter<TicketRecord> = {
  kind: 'chat-platform',
  platform: 'chat_platform',
  read: readTickets,
  batchSize: DEFAULT_BATCH_SIZE,
  rowKind: 'supportTicket',
  action: 'evidence.support_tickets.imported',
  write: writeTickets,
};

/**
 * Imports the chat platform's data-package support-ticket JSON into a profile's tickets
 * (`target.profileName`) with their comments, streaming the file through a JSON tokenizer and
 * committing in batches (see importInBatches). A ticket already imported (same ticket id for the
 * profile) is skipped, so a retry or a resume adds nothing twice.
 *
 * Each ticket's evidence hash is over the RFC 8785 canonical JSON of the ticket object as the file
 * has it (as JSON.parse reads it, fields the import ignores included). Each batch that adds tickets
 * records one `evidence.support_tickets.imported` event.
 */
export async function importSupportTicketsStream(options: StreamImportOptions): Promise<StreamImportResult> {
  return importIntoProfile(SUPPORT_TICKETS, options);
}

/** Imports a local support-ticket JSON file into a profile of a case at once (streamed, committed in batches). */
export async function importSupportTicketsJson(
  caseId: string,
  file: string,
  profileName: string,
): Promise<ImportSummary> {
  return importFileIntoProfile(SUPPORT_TICKETS, caseId, file, profileName);
}
