import { DomainError } from '../errors';

/** Errors of signing in, sessions and tokens: each message written once. */

export class InvalidAccessTokenError extends DomainError {
  constructor() {
    super('UNAUTHENTICATED', 'The access token is invalid or expired');
  }
}

export class UnknownTokenError extends DomainError {
  constructor() {
    super('UNAUTHENTICATED', 'The token is unknown, revoked or expired');
  }
}

export class AccountInactiveError extends DomainError {
  constructor() {
    super('ACCOUNT_INACTIVE', 'This account is inactive');
  }
}

export class AutomationTokenDisabledError extends DomainError {
  constructor() {
    super('UNAUTHENTICATED', 'This automation token is disabled (it has no scopes)');
  }
}

export class SessionNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'No session of yours has this id');
  }
}

export class InvalidCredentialsError extends DomainError {
  constructor() {
    super('INVALID_CREDENTIALS', 'Wrong email or password');
  }
}

export class AccountCannotSignInError extends DomainError {
  constructor() {
    super('ACCOUNT_INACTIVE', 'This account cannot sign in');
  }
}

export class UnknownRefreshTokenError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown refresh token');
  }
}

export class RefreshTokenExpiredError extends DomainError {
  constructor() {
    super('TOKEN_EXPIRED', 'The refresh token has expired');
  }
}

export class RefreshTokenUserGoneError extends DomainError {
  constructor() {
    super('USER_GONE', 'The user of this refresh token no longer exists');
  }
}

export class AutomationTokensOffError extends DomainError {
  constructor() {
    super('FEATURE_DISABLED', 'Automation tokens are turned off');
  }
}

export class UnscopedTokenOptionsError extends DomainError {
  constructor() {
    super('BAD_REQUEST', 'label and ttlDays apply only to scoped tokens: send scopes too');
  }
}

export class NoScopesError extends DomainError {
  constructor() {
    super('UNSUPPORTED_SCOPE', 'A scoped token needs at least one scope');
  }
}

export class AutomationTokenNotFoundError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'No automation token of yours has this id');
  }
}

export class TokenRevokedError extends DomainError {
  constructor() {
    super('TOKEN_REVOKED', 'A revoked token cannot be changed');
  }
}
