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
