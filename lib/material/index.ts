/** Case material: evidence imported into a case (emails, network messages, chat tickets, device notes) and read back. */
export { listEmailThreads, listThreadEmails } from './emails';
export { listSupportTickets } from './chat';
export { listChatProfiles, listNetworkProfiles, searchNetworkMessages } from './network';
export { importCaseNotes } from './notes';
export { createAttachmentUploads, UPLOAD_LINK_SECONDS } from './uploads';
export { getCaseCustody } from './custody';
export { getCustodyExport, startCustodyExport } from './custody-exports';
export {
  cancelImport,
  createImport,
  getImport,
  listImportParts,
  listImports,
  retryImport,
  signImportParts,
  startImport,
} from './imports';
