/**
 * What domain code (lib/<domain>) throws when a request cannot be done: a stable code, a message
 * for the client, and for bad input the fields at fault. Nothing here knows HTTP: lib/http maps
 * each code to a status in one place (lib/http/errors.ts ERROR_STATUS) and each field to where the
 * request carried it (`body.`, `query.` or `path.`). Each domain names its errors in
 * lib/<domain>/errors.ts as subclasses, each message written there once.
 */
export const DOMAIN_ERROR_CODES = [
  'BAD_REQUEST',
  'VALIDATION_FAILED',
  'TERMS_NOT_ACCEPTED',
  'ORGANIZATION_NAME_TAKEN',
  'USER_NOT_CREATED',
  'UNSUPPORTED_SCOPE',
  'TOKEN_EXPIRED',
  'TOKEN_REVOKED',
  'USER_GONE',
  'WRONG_PASSWORD',
  'EMAIL_ALREADY_VERIFIED',
  'INVITATION_NOT_PENDING',
  'INVITEE_DETAILS_REQUIRED',
  'NO_ACTIVE_PLAN_RECORD',
  'LAST_OWNER',
  'EMAIL_TAKEN',
  'NOTHING_TO_CHANGE',
  'INVALID_SIGNATURE',
  'REPORT_TOO_LARGE',
  'UNAUTHENTICATED',
  'INVALID_CREDENTIALS',
  'ACCOUNT_INACTIVE',
  'INVITE_ROLE_NOT_ALLOWED',
  'FORBIDDEN',
  'FEATURE_DISABLED',
  'INSUFFICIENT_SCOPE',
  'NOT_A_MEMBER',
  'INSUFFICIENT_ROLE',
  'NO_ACTIVE_PLAN',
  'SEAT_LIMIT_REACHED',
  'DEVICE_LIMIT_REACHED',
  'STORAGE_LIMIT_REACHED',
  'CASE_LIMIT_REACHED',
  'FEATURE_NOT_IN_PLAN',
  'DELINQUENT',
  'MEMBER_OF_OTHER_ORGANIZATIONS',
  'NOT_FOUND',
  'CONFLICT',
  'UPLOAD_INCOMPLETE',
  'IMPORT_ALREADY_STARTED',
  'IMPORT_NOT_FAILED',
  'IMPORT_NOT_RETRYABLE',
  'IMPORT_NOT_CANCELLABLE',
  'IMPORT_NOT_MULTIPART',
  'CUSTODY_TOO_LARGE',
  'PLAN_BELOW_USAGE',
  'RATE_LIMITED',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_USE',
  'SERVICE_UNAVAILABLE',
  'PAYMENTS_NOT_CONFIGURED',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/**
 * One input field at fault. `field` is its path inside the input the domain function was given
 * (`notes.3.attachments.1`, `cadence`), never where the request carried it.
 */
export interface InputProblem {
  field: string;
  message: string;
}

/** What a rule found beyond the input (an allowance over a cap): answered as given, `path` naming the thing. */
export interface Finding {
  path: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly options: { problems?: InputProblem[]; findings?: Finding[]; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Input that passed its schema but breaks a rule of the domain: 400 VALIDATION_FAILED naming each field. */
export class InvalidInputError extends DomainError {
  constructor(problems: InputProblem[]) {
    super('VALIDATION_FAILED', `Invalid request: ${problems.map((p) => p.field).join(', ')}`, { problems });
  }
}

/** Too many attempts; `retryAfterSeconds` becomes the Retry-After header. */
export class RateLimitedError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', 'Too many requests; try again later', { retryAfterSeconds });
  }
}

/**
 * Something outside the request's control is down (the database, the payment processor): 503 with
 * Retry-After. Nothing the request asked for was done, so the same request may simply be sent again.
 */
export class ServiceUnavailableError extends DomainError {
  constructor(message = 'The service is briefly unavailable; try again shortly', retryAfterSeconds = 5) {
    super('SERVICE_UNAVAILABLE', message, { retryAfterSeconds });
  }
}
