import { closeDb, connectDb } from './client';
import { migrateDatabase } from './migrate';

/** `npm run db:migrate`: applies pending migrations to DATABASE_URL or the PGlite in DATA_DIR. */
const { db, driver } = await connectDb();
await migrateDatabase(db, driver);
await closeDb();
console.log(`migrations applied (${driver})`);
