import { DomainError } from '../errors';

/** The case does not exist, is deleted, or its id is not a UUID. */
export class CaseNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown case');
  }
}

/** The case belongs to another organization than the one the request names. */
export class CaseInOtherOrganizationError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'The case belongs to another organization');
  }
}

/** The caller is not a member of the case's organization or holds no access to the case. */
export class NoCaseAccessError extends DomainError {
  constructor() {
    super('INSUFFICIENT_ROLE', 'You have no access to this case');
  }
}

/** The caller's access does not pass the route's case rule; the message is the rule's (lib/cases/rules.ts). */
export class CaseAccessDeniedError extends DomainError {
  constructor(message: string) {
    super('INSUFFICIENT_ROLE', message);
  }
}

export class OwnerGrantDeniedError extends DomainError {
  constructor() {
    super('INSUFFICIENT_ROLE', 'Only a case owner may grant owner access');
  }
}

/** A case admin may not demote or remove a case owner. */
export class OwnerChangeDeniedError extends DomainError {
  constructor() {
    super('INSUFFICIENT_ROLE', "Only a case owner or an organization owner or admin may change an owner's access");
  }
}

export class LastCaseOwnerError extends DomainError {
  constructor() {
    super('LAST_OWNER', 'A case must keep at least one owner');
  }
}

/** Access is granted only to members of the case's organization. */
export class GranteeNotMemberError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'This user is not a member of the organization');
  }
}

export class NoAccessToRevokeError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'This user has no access to the case');
  }
}
