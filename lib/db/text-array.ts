import { type SQL, sql } from 'drizzle-orm';
import { deviceNotes } from './schema/material';

/**
 * A list of strings as ONE `text[]` parameter, however many values (a statement has at most 65,535
 * parameters; a request may name 500,000 keys). Cast it in the statement where another type is
 * wanted (`::uuid[]`). The parameter is encoded as a text array column encodes it.
 */
export const textArray = (values: readonly string[]): SQL =>
  sql`${sql.param([...values], deviceNotes.attachmentKeys)}::text[]`;
