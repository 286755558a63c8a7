/** True when `error` (or the driver error drizzle wrapped) is a unique violation, optionally of one constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (
    let current: unknown = error;
    current && typeof current === 'object';
    current = (current as { cause?: unknown }).cause
  ) {
    const candidate = current as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (candidate.code === '23505') {
      return !constraint || candidate.constraint_name === constraint || candidate.constraint === constraint;
    }
  }
  return false;
}

/** Driver and socket error codes that mean the server could not be reached or the connection broke. */
const CONNECTION_ERROR_CODES = new Set([
  // postgres.js
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // Node sockets and DNS
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * SQLSTATEs of a server that is going away, full, or cut a statement short: class 08 (connection
 * exception), shutdown and start-up (57P01-57P03), too many connections (53300), and a statement
 * cancelled by its timeout (57014). None is a defect of the request: the same request can succeed
 * a moment later.
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|53300|57014)$/;

/**
 * True when `error` (or what drizzle wrapped in it) says the database could not be reached, the
 * connection dropped mid-query, or a statement ran out of time: answered 503, never 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.pop();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const { code, cause, errors } = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code))) return true;
    pending.push(cause);
    // Node reports a refused connection to every address of a host as one AggregateError.
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return false;
}
