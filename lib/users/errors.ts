import { DomainError } from '../errors';

/** Errors of accounts and profiles: each message written once. */

export class TermsNotAcceptedError extends DomainError {
  constructor() {
    super('TERMS_NOT_ACCEPTED', 'The terms must be accepted');
  }
}

export class EmailRegisteredError extends DomainError {
  constructor() {
    super('USER_NOT_CREATED', 'An account with this email already exists');
  }
}

export class WrongPasswordError extends DomainError {
  constructor() {
    super('WRONG_PASSWORD', 'The old password is wrong');
  }
}

export class UnknownVerificationTokenError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown verification token');
  }
}

export class VerificationLinkExpiredError extends DomainError {
  constructor() {
    super('TOKEN_EXPIRED', 'The verification link has expired');
  }
}

export class EmailAlreadyVerifiedError extends DomainError {
  constructor() {
    super('EMAIL_ALREADY_VERIFIED', 'The email is already verified');
  }
}

export class UserNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'User not found');
  }
}
