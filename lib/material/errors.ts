import { DomainError, InvalidInputError } from '../errors';

export class ThreadNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown thread');
  }
}

export class ChatProfileNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown chat-platform profile');
  }
}

/** An importer (the admin command line) named a case that does not exist. */
export class ImportCaseNotFoundError extends DomainError {
  constructor(caseId: string) {
    super('NOT_FOUND', `No case ${caseId}`);
  }
}

export class ImportNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown import');
  }
}

/** Start before the file is uploaded whole: nothing stored yet, or not the size declared. */
export class UploadIncompleteError extends DomainError {
  constructor(declared: number, stored: number | null) {
    super(
      'UPLOAD_INCOMPLETE',
      stored === null
        ? 'The file has not been uploaded yet: PUT it to the upload link first'
        : `The uploaded file is ${stored} bytes, not the ${declared} declared`,
    );
  }
}

/** Start of a multipart import before every part arrived at its size: names the parts still missing. */
export class UploadPartsMissingError extends DomainError {
  constructor(missing: number[], partCount: number) {
    const shown = missing.slice(0, 20).join(', ');
    super(
      'UPLOAD_INCOMPLETE',
      `${missing.length} of the ${partCount} parts have not arrived at their size: part${missing.length === 1 ? '' : 's'} ${shown}${missing.length > 20 ? ', ...' : ''}`,
    );
  }
}

/** Parts asked of an import that is not sent in parts (its file takes one PUT). */
export class ImportNotMultipartError extends DomainError {
  constructor() {
    super('IMPORT_NOT_MULTIPART', 'This import uploads its file with one PUT, not in parts');
  }
}

export class ImportAlreadyStartedError extends DomainError {
  constructor(status: string) {
    super('IMPORT_ALREADY_STARTED', `The import has already started (it is ${status})`);
  }
}

export class ImportNotFailedError extends DomainError {
  constructor(status: string) {
    super('IMPORT_NOT_FAILED', `Only a failed import can be retried (this one is ${status})`);
  }
}

/** A failed import that has used all its attempts: it is not run again (cancel ends it). */
export class ImportNotRetryableError extends DomainError {
  constructor(attempts: number) {
    super(
      'IMPORT_NOT_RETRYABLE',
      `This import stopped without finishing ${attempts} times and is not tried again; cancel it and contact support`,
    );
  }
}

/** Cancel of an import that already ended (succeeded or cancelled). */
export class ImportNotCancellableError extends DomainError {
  constructor(status: string) {
    super('IMPORT_NOT_CANCELLABLE', `The import has already ended (it is ${status}): there is nothing to cancel`);
  }
}

/** A custody cursor no answer gave (or one of another list): 400 naming the parameter. */
export class InvalidCursorError extends InvalidInputError {
  constructor(field: 'itemsCursor' | 'eventsCursor') {
    super([{ field, message: 'Expected the nextCursor of an earlier custody answer' }]);
  }
}

/** `?format=pdf` of a case too big to render in a request: its PDF is a background export. */
export class CustodyTooLargeError extends DomainError {
  constructor(items: number, events: number, max: number) {
    super(
      'CUSTODY_TOO_LARGE',
      `The case has ${items} items and ${events} events, more than ${max} for a PDF at once: start an export (POST /cases/{caseId}/custody/exports)`,
    );
  }
}

export class CustodyExportNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown custody export');
  }
}
