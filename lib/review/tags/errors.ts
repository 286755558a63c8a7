import { DomainError } from '../../errors';

/** A tag that does not exist, or one the caller may not see (the other side's, another user's): never 403. */
export class TagNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown tag');
  }
}

/** An active tag of the same scope already has the name (compared case-insensitively). */
export class TagNameTakenError extends DomainError {
  constructor(name: string) {
    super('CONFLICT', `An active tag of this scope is already named "${name}"`);
  }
}

/** System tags come with the service and are read-only through the API. */
export class SystemTagReadOnlyError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'System tags are read-only');
  }
}

/** An organization tag through a case route: they are the firm's, managed by its owners and admins. */
export class OrganizationTagElsewhereError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'Organization tags are managed by organization owners and admins at /organization/{orgId}/tags');
  }
}

/** A deactivated tag keeps its history but takes no more changes. */
export class TagInactiveError extends DomainError {
  constructor() {
    super('CONFLICT', 'The tag has been deleted (deactivated); create a new tag instead');
  }
}
