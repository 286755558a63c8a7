import type { DomainErrorCode } from '../errors';

/**
 * The closed list of error codes the API answers with, and the one map from code to status:
 * the domain's codes (lib/errors.ts, thrown as DomainError) and the HTTP layer's own. The error
 * middleware turns both into the error envelope.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  TERMS_NOT_ACCEPTED: 400,
  ORGANIZATION_NAME_TAKEN: 400,
  USER_NOT_CREATED: 400,
  UNSUPPORTED_SCOPE: 400,
  TOKEN_EXPIRED: 400,
  TOKEN_REVOKED: 400,
  USER_GONE: 400,
  WRONG_PASSWORD: 400,
  EMAIL_ALREADY_VERIFIED: 400,
  INVITATION_NOT_PENDING: 400,
  INVITEE_DETAILS_REQUIRED: 400,
  NO_ACTIVE_PLAN_RECORD: 400,
  LAST_OWNER: 400,
  EMAIL_TAKEN: 400,
  NOTHING_TO_CHANGE: 400,
  INVALID_SIGNATURE: 400,
  REPORT_TOO_LARGE: 400,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  ACCOUNT_INACTIVE: 401,
  INVITE_ROLE_NOT_ALLOWED: 401,
  FORBIDDEN: 403,
  FEATURE_DISABLED: 403,
  INSUFFICIENT_SCOPE: 403,
  NOT_A_MEMBER: 403,
  INSUFFICIENT_ROLE: 403,
  NO_ACTIVE_PLAN: 403,
  SEAT_LIMIT_REACHED: 403,
  DEVICE_LIMIT_REACHED: 403,
  STORAGE_LIMIT_REACHED: 403,
  CASE_LIMIT_REACHED: 403,
  FEATURE_NOT_IN_PLAN: 403,
  DELINQUENT: 403,
  MEMBER_OF_OTHER_ORGANIZATIONS: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  UPLOAD_INCOMPLETE: 409,
  IMPORT_ALREADY_STARTED: 409,
  IMPORT_NOT_FAILED: 409,
  IMPORT_NOT_RETRYABLE: 409,
  IMPORT_NOT_CANCELLABLE: 409,
  IMPORT_NOT_MULTIPART: 409,
  CUSTODY_TOO_LARGE: 409,
  PLAN_BELOW_USAGE: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  // Request limits: the local server's own (infra/local), answered in the cloud by API Gateway or
  // the edge; the body limit by the function too (lib/http/payload-limits.ts).
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
  PAYMENTS_NOT_CONFIGURED: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
// Every code a domain can throw has its status here (a compile error otherwise).
ERROR_STATUS satisfies Record<DomainErrorCode, number>;
type CodeOfStatus<S extends number> = { [K in ErrorCode]: (typeof ERROR_STATUS)[K] extends S ? K : never }[ErrorCode];

export interface ErrorDetail {
  path: string;
  message: string;
}

export class HttpError extends Error {
  readonly statusCode: number;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.statusCode = ERROR_STATUS[code];
    this.headers = headers;
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string, code: CodeOfStatus<400> = 'BAD_REQUEST') {
    super(code, message);
  }
}

export class ValidationFailedError extends HttpError {
  constructor(details: ErrorDetail[]) {
    super('VALIDATION_FAILED', `Invalid request: ${details.map((d) => d.path).join(', ')}`, details);
  }
}

export class UnauthenticatedError extends HttpError {
  constructor(message = 'A valid bearer token is required', code: CodeOfStatus<401> = 'UNAUTHENTICATED') {
    super(code, message);
  }
}

export class ForbiddenError extends HttpError {
  constructor(message = 'You may not do this', code: CodeOfStatus<403> = 'FORBIDDEN') {
    super(code, message);
  }
}

export class NotFoundError extends HttpError {
  constructor(message = 'Not found', code: CodeOfStatus<404> = 'NOT_FOUND') {
    super(code, message);
  }
}

export class ConflictError extends HttpError {
  constructor(message: string, code: CodeOfStatus<409> = 'CONFLICT', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
