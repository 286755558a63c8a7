/** The upload is gone, or not the bytes the import started with or hashed: the import fails with UPLOAD_CHANGED. */
export class UploadChangedError extends Error {
  readonly code = 'UPLOAD_CHANGED';
}

/** The staged upload is no longer the version the import started with (it was replaced or removed). */
export const stagedUploadChanged = () =>
  new UploadChangedError(
    'The uploaded file was replaced or removed after the import started; nothing was imported from it',
  );

/** The import was cancelled while this worker ran it: it stops without writing anything more. */
export class ImportCancelledError extends Error {}
