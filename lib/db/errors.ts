/**
 * `error` and every error it wraps: drizzle's `cause` (the driver's error), and the members of
 * Node's AggregateError (a refused connection to every address of a host).
 */
function* wrappedErrors(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    yield current as Record<string, unknown>;
    const { cause, errors } = current as { cause?: unknown; errors?: unknown };
    pending.push(cause, ...(Array.isArray(errors) ? errors : []));
  }
}

/** True when `error` (or the driver error drizzle wrapped) is a unique violation, optionally of one constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (const candidate of wrappedErrors(error)) {
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
 * RDS Proxy's answer when no database connection could be borrowed within its borrow timeout (the
 * concurrency budget, infra/README.md): its SQLSTATE is not documented, so its message tells it.
 */
const PROXY_POOL_EXHAUSTED =
  /borrow a connection from the pool timed out|timed-out waiting to acquire database connection/i;

/**
 * True when `error` (or what drizzle wrapped in it) says the database could not be reached, the
 * connection dropped mid-query, RDS Proxy's pool stayed full past its borrow timeout, or a statement
 * ran out of time: answered 503, never 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const { code, message } of wrappedErrors(error)) {
    if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code))) return true;
    if (typeof message === 'string' && PROXY_POOL_EXHAUSTED.test(message)) return true;
  }
  return false;
}
