import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import type { networkMessages } from '../../../db/schema/material';
import { hashCanonical } from '../../evidence-hash';
import { type ImportFile, MalformedImportError, type ReadItem } from '../batch';
import { IMPORT_LIMITS, quoted, sizeText } from '../limits';

const REQUIRED = ['CONVERSATION ID', 'FROM', 'DATE', 'CONTENT'] as const;

type Row = Record<string, string | undefined>;

/** A row with more fields than IMPORT_LIMITS.csvFields, found at `line`. */
class TooManyFieldsError extends Error {
  constructor(readonly line: number) {
    super(`more than ${IMPORT_LIMITS.csvFields} fields`);
  }
}
/** One row of messages.csv, ready to write but for the import's target (case, profile, file, importer) and the conversation's id. */
export interface NetworkMessage {
  conversationId: string;
  conversationTitle: string | undefined;
  participants: string[];
  values: Omit<
    typeof networkMessages.$inferInsert,
    'caseId' | 'profileId' | 'conversationId' | 'importSource' | 'importedById'
  >;
  /** The row's characters: what the batch holds in memory for it, about. */
  weight: number;
}

/** The export's date form, "2026-11-02 10:00:00 UTC", as an instant; Invalid Date when it is none. */
const dateOf = (text: string) => new Date(text.replace(' UTC', 'Z').replace(' ', 'T'));

/**
 * The rows of messages.csv from the first not yet imported (`from.itemIndex`; the rows before it
 * are read and passed over, not written). The header must name the required columns; a row the
 * CSV parser cannot read, or whose DATE is not a date, is malformed, named by its line.
 */
export async function* readNetworkMessages(file: ImportFile): AsyncGenerator<ReadItem<NetworkMessage>> {
  const input = await file.open(0);
  // The line the next row starts on (the header's line, then the line after the last row read).
  let nextLine = 1;
  const parser = parse({
    // The header as written (only a byte-order mark removed) is what each row's hash is keyed by.
    columns: (header: string[]) => {
      const names = new Set(header.map((column) => column.trim().toUpperCase()));
      const missing = REQUIRED.filter((column) => !names.has(column));
      if (missing.length)
        throw new MalformedImportError(`Line 1: messages.csv lacks the columns ${missing.join(', ')}`, 0);
      nextLine = parser.info.lines + 1;
      return header;
    },
    skip_empty_lines: true,
    relax_column_count: true,
    // A row over it (an unclosed quote gathers the rest of the file into one) fails at the limit.
    max_record_size: IMPORT_LIMITS.csvRecordChars,
    bom: true,
    info: true,
  });
  let index = 0;
  try {
    for await (const { record, info } of recordsOf(parser, input)) {
      const itemIndex = index;
      index += 1;
      nextLine = info.lines + 1;
      if (itemIndex < file.from.itemIndex) continue;
      // What the import reads: the same row under trimmed, upper-case column names.
      const row: Row = {};
      for (const [column, value] of Object.entries(record)) row[column.trim().toUpperCase()] = value;
      const conversationId = row['CONVERSATION ID'];
      if (conversationId === undefined)
        throw new MalformedImportError(`Line ${info.lines}: the row has no CONVERSATION ID`, itemIndex);
      const date = dateOf(row.DATE ?? '');
      if (Number.isNaN(date.getTime()))
        throw new MalformedImportError(`Line ${info.lines}: DATE "${quoted(row.DATE ?? '')}" is not a date`, itemIndex);
      let weight = 0;
      for (const value of Object.values(record)) weight += value?.length ?? 0;
      yield {
        item: {
          weight,
          conversationId,
          conversationTitle: row['CONVERSATION TITLE'],
          participants: [row.FROM, ...(row.TO ?? '').split(',')]
            .map((p) => p?.trim())
            .filter((p): p is string => Boolean(p)),
          values: {
            ...hashCanonical(record),
            externalId: createHash('sha256')
              .update(JSON.stringify([conversationId, row.FROM, row.DATE, row.SUBJECT ?? '', row.CONTENT]))
              .digest('hex'),
            from: row.FROM ?? '',
            to: row.TO ?? '',
            date,
            subject: row.SUBJECT || null,
            content: row.CONTENT ?? '',
            folder: row.FOLDER || null,
            isDraft: /^(true|yes|1)$/i.test(row['IS MESSAGE DRAFT'] ?? ''),
            attachments: row.ATTACHMENTS ?? '',
          },
        },
        next: { byteOffset: info.bytes, itemIndex: itemIndex + 1 },
      };
    }
  } catch (error) {
    if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE')
      throw new MalformedImportError(
        `Line ${nextLine}: the row is longer than ${sizeText(IMPORT_LIMITS.csvRecordChars)} (a quote left open?)`,
        index,
      );
    if (error instanceof TooManyFieldsError)
      throw new MalformedImportError(
        `Line ${error.line}: the row has more than ${IMPORT_LIMITS.csvFields.toLocaleString('en-US')} fields`,
        index,
      );
    if (error instanceof CsvError)
      // The parser's error names its line; it is at the row after the `index` rows read.
      throw new MalformedImportError(
        `Line ${(error as CsvError & { lines: number }).lines}: ${quoted(error.message)}`,
        index,
      );
    throw error;
  } finally {
    input.destroy();
    parser.destroy();
  }
}

type ParsedRecord = { record: Row; info: { lines: number; bytes: number } };

/** The synchronous parser behind csv-parse's stream (its `api`, which the stream's own transform calls). */
type CsvApi = {
  /** The row being read: its fields so far. */
  state: { record: unknown[] };
  info: { lines: number };
  parse(
    chunk: Buffer | undefined,
    end: boolean,
    push: (record: ParsedRecord) => void,
    close: () => void,
  ): Error | undefined;
};

/**
 * The records of `input`, fed to csv-parse a chunk at a time through the parser the stream itself
 * drives. Not through the stream: a stream that errs drops the records it holds unread, so a row
 * that fails after valid rows of the same chunk would take them with it and the import would name
 * the wrong row. Here every row parsed before an error is yielded, then the error is thrown; and
 * the file is read only as fast as its rows are consumed.
 *
 * After each chunk the row being read has its fields counted: max_record_size counts characters
 * only, so a row of endless commas (empty fields) would fill an array; a chunk adds at most one
 * field a byte to it before the count refuses it (TooManyFieldsError).
 */
async function* recordsOf(parser: ReturnType<typeof parse>, input: Readable): AsyncGenerator<ParsedRecord> {
  const { api } = parser as unknown as { api: CsvApi };
  const close = () => {};
  for await (const chunk of input as AsyncIterable<Buffer>) {
    const parsed: ParsedRecord[] = [];
    const error = api.parse(chunk, false, (record) => parsed.push(record), close);
    yield* parsed;
    if (error) throw error;
    if (api.state.record.length > IMPORT_LIMITS.csvFields) throw new TooManyFieldsError(api.info.lines);
  }
  const parsed: ParsedRecord[] = [];
  const error = api.parse(undefined, true, (record) => parsed.push(record), close);
  yield* parsed;
  if (error) throw error;
}
