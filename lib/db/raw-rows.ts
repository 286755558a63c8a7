import type { SQL } from 'drizzle-orm';
import type { Executor } from './client';

/** The rows of a raw statement, whichever driver answers it (postgres.js: an array; PGlite: `{ rows }`). */
export async function rawRows<T>(executor: Executor, query: SQL): Promise<T[]> {
  const result = (await executor.execute(query)) as unknown as T[] | { rows: T[] };
  return Array.isArray(result) ? result : result.rows;
}
