import { vi } from 'vitest';
import { db } from '../../lib/db/client';

type Session = { prepareQuery: (...args: unknown[]) => object };

/**
 * Runs `run` and counts the SQL statements it sends, inside transactions too, prepared ones
 * included: the spy sits on `execute` and `all` of the prepared-query class that every statement
 * of the driver (postgres.js or PGlite) runs through, whether drizzle built it for this call or a
 * module prepared it once (`.prepare(name)`) and runs it again.
 */
export async function countQueries<T>(run: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const session = (db() as unknown as { session: Session }).session;
  const prototype = Object.getPrototypeOf(
    session.prepareQuery({ sql: 'select 1', params: [] }, undefined, undefined, false),
  ) as { execute: (...args: unknown[]) => unknown; all: (...args: unknown[]) => unknown };
  const spies = [vi.spyOn(prototype, 'execute'), vi.spyOn(prototype, 'all')];
  try {
    const result = await run();
    return { result, queries: spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0) };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}
