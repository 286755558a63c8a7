import { DomainError } from '../errors';

/** The key was first sent with another request (other body, path, query or organization). */
export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
  }
}

/** An earlier request with this key is still running: retry once it has answered. */
export class IdempotencyKeyInUseError extends DomainError {
  constructor() {
    super('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry shortly');
  }
}
