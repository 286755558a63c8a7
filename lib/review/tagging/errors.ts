import { DomainError } from '../../errors';

/** A tag that does not exist or that the caller may not see (the other side's): 404, never 403. */
export class TagNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown tag');
  }
}

/** A deactivated tag cannot be put on evidence (it can still be taken off). */
export class InactiveTagError extends DomainError {
  constructor() {
    super('CONFLICT', 'A tag to add is deactivated');
  }
}

/** An item that is not in the case, or that the caller's side may not see. */
export class EvidenceItemNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown evidence item');
  }
}

/** A filter's thread that is not in the case. */
export class TaggingThreadNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown thread');
  }
}

export class TaggingJobNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown tagging job');
  }
}
