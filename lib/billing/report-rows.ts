import { asc, type Column, eq, type SQL, sql } from 'drizzle-orm';
import type { Sql } from 'postgres';
import { db, dbDriver } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { cases } from '../db/schema/cases';

/** Rows fetched per round trip while streaming from PostgreSQL: a few hundred kilobytes at a time. */
const CURSOR_ROWS = 2_000;

/** Only the columns a report prints or sums, in the order the query selects them. */
const COLUMNS = {
  caseId: billingRows.caseId,
  caseName: cases.name,
  createdAt: billingRows.createdAt,
  skuKey: billingRows.skuKey,
  description: billingRows.description,
  quantity: billingRows.quantity,
  unitAmountCents: billingRows.unitAmountCents,
  amountCents: billingRows.amountCents,
  status: billingRows.status,
  invoiceId: billingRows.invoiceId,
  informational: billingRows.informational,
} satisfies Record<string, Column>;

export type ReportSourceRow = {
  [K in keyof typeof COLUMNS]: (typeof COLUMNS)[K]['_']['notNull'] extends true
    ? (typeof COLUMNS)[K]['_']['data']
    : (typeof COLUMNS)[K]['_']['data'] | null;
};

const FIELDS = Object.entries(COLUMNS) as [keyof ReportSourceRow, Column][];

/** A raw row of the driver (values in select order) decoded as drizzle decodes it. */
function decode(values: unknown[]): ReportSourceRow {
  const row: Record<string, unknown> = {};
  for (let index = 0; index < FIELDS.length; index++) {
    const [name, column] = FIELDS[index]!;
    const value = values[index];
    row[name] = value === null ? null : column.mapFromDriverValue(value);
  }
  return row as ReportSourceRow;
}

/**
 * The report's rows in batches, in one of two orders:
 * - `time`: (createdAt, idempotencyKey), the order the JSON report groups into sections in memory;
 * - `section`: a section (a case, or the organization-wide rows) where its first row comes in time
 *   order, its rows following in time order. The database sorts, so the PDF writes each section as
 *   it arrives, its subtotal at its end, without holding any row; the sort costs the database a
 *   few hundred milliseconds more than `time` on 50,000 rows, which the JSON report need not pay.
 *
 * On PostgreSQL the rows come through a cursor, CURSOR_ROWS at a time, so the process never holds
 * the whole result; PGlite (local development and tests) answers the query at once.
 */
export async function* reportRows(
  where: SQL | undefined,
  order: 'time' | 'section',
): AsyncGenerator<ReportSourceRow[]> {
  const window = sql`partition by ${billingRows.caseId} order by ${billingRows.createdAt}, ${billingRows.idempotencyKey}`;
  const query = db()
    .select(COLUMNS)
    .from(billingRows)
    .leftJoin(cases, eq(cases.id, billingRows.caseId))
    .where(where)
    .orderBy(
      ...(order === 'section'
        ? [
            sql`first_value(${billingRows.createdAt}) over (${window})`,
            sql`first_value(${billingRows.idempotencyKey}) over (${window})`,
            // Two sections never share a first row (idempotency keys are unique); this only keeps the sort honest.
            sql`${billingRows.caseId} nulls first`,
          ]
        : []),
      asc(billingRows.createdAt),
      asc(billingRows.idempotencyKey),
    );
  if (dbDriver() === 'pglite') {
    yield (await query) as ReportSourceRow[];
    return;
  }
  const { sql: text, params } = query.toSQL();
  // The postgres.js client drizzle runs on (it sends unnamed statements, as drizzle does).
  const client = (db() as unknown as { $client: Sql }).$client;
  for await (const batch of client
    .unsafe(text, params as never[])
    .values()
    .cursor(CURSOR_ROWS)) {
    yield (batch as unknown as unknown[][]).map(decode);
  }
}
