import { fileURLToPath } from 'node:url';
import { dbDriver, type Database } from './client';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Applies the drizzle-kit migrations in drizzle/ with the migrator of the open driver. */
export async function migrateDatabase(
  database: Database,
  driver = dbDriver(),
  migrationsFolder = MIGRATIONS_FOLDER,
): Promise<void> {
  if (driver === 'postgres') {
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    await migrate(database as never, { migrationsFolder });
  } else {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(database as never, { migrationsFolder });
  }
}
