/** The upload is gone, or not the bytes the import started with or hashed: the import fails with UPLOAD_CHANGED. */
export class UploadChangedError extends Error {
  readonly code = 'UPLOAD_CHANGED';
}

/** The import was cancelled while this worker ran it: it stops without writing anything more. */
export class ImportCancelledError extends Error {}
