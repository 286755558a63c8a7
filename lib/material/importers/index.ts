import type { ImportKind, StreamImportOptions, StreamImportResult } from './batch';
import { importSupportTicketsStream } from './chat-platform';
import { importEmailStream } from './email';
import { importNetworkMessagesStream } from './professional-network';

export * from './batch';
export { importSupportTicketsJson, importSupportTicketsStream } from './chat-platform';
export { type EmailImportOptions, type ImportSummary, importEmailFile, importEmailStream } from './email';
export { importNetworkMessagesCsv, importNetworkMessagesStream } from './professional-network';

const importers: Record<ImportKind, (options: StreamImportOptions) => Promise<StreamImportResult>> = {
  email: importEmailStream,
  'professional-network': importNetworkMessagesStream,
  'chat-platform': importSupportTicketsStream,
};

/** Imports a file of `kind` from `options.from` on, in batches (each importer says how it reads its format). */
export function importStream(kind: ImportKind, options: StreamImportOptions): Promise<StreamImportResult> {
  return importers[kind](options);
}
