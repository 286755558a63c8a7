import { DomainError } from '../errors';

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
