import { type Column, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { uuidv7 } from 'uuidv7';

/** Time-ordered UUID v7: sortable by creation, safe to expose. */
export const newId = (): string => uuidv7();

// The text form of a UUID, any version, either case (RFC 9562 reads it case-insensitively).
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `value` can name a row. Clients may send any string as an id (the contract types every
 * id as a string); one that is not a UUID names nothing, so it matches no row instead of reaching
 * Postgres, whose uuid cast would fail the request.
 */
export const isUuid = (value: string): boolean => UUID_TEXT.test(value);

/** `column = value` for an id a client sent; false (matches nothing) when it is not a UUID. */
export function idEquals(column: Column, value: string): SQL {
  return isUuid(value) ? eq(column, value.toLowerCase()) : sql`false`;
}

/** Only the ids that can name a row, lowercased and without repeats. */
export const matchableIds = (values: readonly string[]): string[] => [
  ...new Set(values.filter(isUuid).map((value) => value.toLowerCase())),
];

/** `column in values` for ids a client sent; the ones that are not UUIDs match nothing. */
export function idIn(column: Column, values: readonly string[]): SQL {
  const ids = matchableIds(values);
  return ids.length > 0 ? inArray(column, ids) : sql`false`;
}
