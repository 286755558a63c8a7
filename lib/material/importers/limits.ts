import { createHash } from 'node:crypto';
import { config } from '../../config';
import { MalformedImportError } from './batch';

const MiB = 1024 ** 2;

/**
 * What one item of an import may hold: the importers read a file of any size in bounded memory
 * only if every item they hold is bounded too (a CSV quote that never closes, a JSON string or an
 * mbox header that never ends would otherwise be gathered whole). An item over its limit fails the
 * import MALFORMED_FILE naming it, checked while the file streams, before memory grows past it.
 *
 * Each limit is far above what a real export holds and low enough that the import worker stays
 * under 256 MB of peak RSS (about 90 MB of it is the bundled worker before it reads anything): an
 * item is held a few times over while it is parsed, hashed and written (its text, its canonical
 * JSON, the batch's JSON parameter).
 */
export const IMPORT_LIMITS = {
  /**
   * One row of messages.csv, in characters (csv-parse's max_record_size): a message of the
   * professional network is text a person typed (kilobytes); 4 MiB is a thousand times that, and
   * what an unclosed quote gathers before it is refused.
   */
  csvRecordChars: 4 * MiB,
  /**
   * Fields in the row being read, counted between chunks of the file: the export has about ten
   * columns; a row of millions of empty fields (commas) is no row.
   */
  csvFields: 10_000,
  /**
   * One JSON string, key or number of the ticket file, in characters: a ticket comment is text a
   * person typed (kilobytes); 8 MiB keeps one below PostgreSQL's 256 MB jsonb string with room.
   */
  jsonValueChars: 8 * MiB,
  /** One ticket with all its comments, in characters of its keys and values (1 per other token). */
  jsonTicketChars: 16 * MiB,
  /**
   * The header block of one email, in bytes up to its first empty line: Postfix refuses headers
   * over 100 KiB by default (header_size_limit); ten times that is no mail server's.
   */
  emailHeaderBytes: 1 * MiB,
  /**
   * One email message with its attachments, in bytes as the file holds it: mail services cap a
   * message at tens of megabytes (Gmail: 25 MB of attachments, about 34 MB once base64-encoded).
   */
  emailMessageBytes: 64 * MiB,
  /** What one batch of emails holds before it commits, in bytes of the messages as the file holds them. */
  emailBatchBytes: 32 * MiB,
  /**
   * What one batch of rows or tickets holds before it commits (the importers' batch sizes are
   * counts, measured on typical items: 2,000 rows of 4 MiB would be 8 GiB).
   */
  batchChars: 16 * MiB,
  /** An object key, in bytes: S3's limit. */
  objectKeyBytes: 1024,
  /** One path segment of an object key, in bytes: the local store's file name limit (ext4, APFS, NTFS). */
  objectKeySegmentBytes: 255,
  /** A file name as the last part of an object key (keySafe), in characters (ASCII: bytes). */
  keyNameChars: 120,
} as const;

/** A size as a person reads it: "8 MiB", "1,024 bytes". */
export function sizeText(bytes: number): string {
  return bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes.toLocaleString('en-US')} bytes`;
}

/** The most items one import reads (IMPORT_MAX_ITEMS): the import fails TOO_MANY_ITEMS at the next one. */
export class TooManyItemsError extends MalformedImportError {
  override readonly code = 'TOO_MANY_ITEMS';

  constructor(maxItems: number) {
    super(
      `The file holds more than ${maxItems.toLocaleString('en-US')} items, the most one import reads (IMPORT_MAX_ITEMS); the first ${maxItems.toLocaleString('en-US')} are imported`,
      maxItems,
    );
    this.name = 'TooManyItemsError';
  }
}

/**
 * The items of `items` up to IMPORT_MAX_ITEMS (counted from the file's start, so a resumed import
 * counts those before its checkpoint too); the next one throws TooManyItemsError, which stops the
 * import as a malformed item does: what came before it commits.
 */
export async function* atMostMaxItems<T extends { next: { itemIndex: number } }>(
  items: AsyncIterable<T>,
): AsyncGenerator<T> {
  const max = config().IMPORT_MAX_ITEMS;
  for await (const read of items) {
    if (read.next.itemIndex > max) throw new TooManyItemsError(max);
    yield read;
  }
}

/** Text from the file quoted in an error message, cut to 200 characters: a message names the item, it does not carry it. */
export function quoted(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** A short hash of `text`: 8 hex digits of its SHA-256, enough to tell apart two names cut to the same prefix. */
export const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * An object key the import writes: `item` (its name in the file) fails MALFORMED_FILE when the key
 * is longer than S3 takes or a segment longer than a local file name may be, never at the store.
 */
export function assertStorableKey(key: string, item: string, itemIndex: number): void {
  const bytes = Buffer.byteLength(key);
  if (bytes > IMPORT_LIMITS.objectKeyBytes)
    throw new MalformedImportError(
      `${item}: its object key would be ${bytes} bytes, over the ${IMPORT_LIMITS.objectKeyBytes}-byte limit`,
      itemIndex,
    );
  const segment = key.split('/').find((part) => Buffer.byteLength(part) > IMPORT_LIMITS.objectKeySegmentBytes);
  if (segment !== undefined)
    throw new MalformedImportError(
      `${item}: a part of its object key is ${Buffer.byteLength(segment)} bytes, over the ${IMPORT_LIMITS.objectKeySegmentBytes}-byte limit`,
      itemIndex,
    );
}
