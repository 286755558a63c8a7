/**
 * A value made on first use (a lazy import, an SDK client) and kept for the life of the process,
 * except when making it failed: a rejected promise is forgotten, so the next call tries again. A
 * bare `cached ??= import(...)` would keep the rejection, and a warm function would fail every
 * request until its next cold start. Concurrent first calls share one attempt.
 */
export function lazyRetrying<T>(make: () => Promise<T>): { (): Promise<T>; reset(): void } {
  let pending: Promise<T> | undefined;
  const get = () => {
    if (!pending) {
      const attempt = (async () => make())();
      pending = attempt;
      attempt.catch(() => {
        if (pending === attempt) pending = undefined;
      });
    }
    return pending;
  };
  return Object.assign(get, {
    reset: () => {
      pending = undefined;
    },
  });
}
