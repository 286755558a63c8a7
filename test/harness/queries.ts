import { vi } from 'vitest';
import { db } from '../../lib/db/client';

/**
 * Runs `run` and counts the SQL statements it sends, inside transactions too: the spy sits on the
 * session class that the database and every transaction share (postgres.js or PGlite).
 */
export async function countQueries<T>(run: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const prototype = Object.getPrototypeOf((db() as unknown as { session: object }).session) as {
    prepareQuery: (...args: unknown[]) => unknown;
  };
  const spy = vi.spyOn(prototype, 'prepareQuery');
  try {
    const result = await run();
    return { result, queries: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}
