import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { isUniqueViolation } from '../db/errors';
import { organizations } from '../db/schema/organizations';
import { organizationNameKey } from './name-key';

/** Prefix of a name_key the database set (column default: rows written by SQL, and rows before migration 0009). */
export const PENDING_NAME_KEY_PREFIX = '\u200b';
const pendingKey = sql`left(${organizations.nameKey}, 1) = chr(8203)`;

/**
 * SQL cannot compute the TR39 skeleton, so rows that got their name_key from the database (the
 * migration's backfill, or an insert by plain SQL) carry a unique placeholder. Before any name is
 * compared, the application computes their real key. Two old names with the same key both stay:
 * the later one keeps the key with its id appended after U+2060 (no computed key contains it), so
 * a new name clashing with either is still refused. Idempotent and safe to race: each update only
 * replaces the placeholder it read, inside a savepoint. Usually a single indexed query finding nothing.
 */
export async function recomputePendingNameKeys(executor: Executor): Promise<void> {
  const pending = await executor
    .select({ id: organizations.id, name: organizations.name, nameKey: organizations.nameKey })
    .from(organizations)
    .where(pendingKey)
    .orderBy(organizations.createdAt, organizations.id);
  for (const row of pending) {
    const key = organizationNameKey(row.name);
    const replace = (value: string) =>
      executor.transaction(async (savepoint) => {
        await savepoint.execute(
          sql`update ${organizations} set name_key = ${value} where id = ${row.id} and name_key = ${row.nameKey}`,
        );
      });
    try {
      await replace(key);
    } catch (error) {
      if (!isUniqueViolation(error, 'organizations_name_key_key')) throw error;
      await replace(`${key}\u2060${row.id}`);
    }
  }
}
