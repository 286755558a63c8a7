import type { Readable } from 'node:stream';
import type { Tx } from '../../db/client';

/** The three export formats an import reads. */
export const IMPORT_KINDS = ['email', 'professional-network', 'chat-platform'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

/**
 * Where an import stands in its file: the byte where the next unread item starts and how many
 * items come before it. A resumed import starts there: the mbox importer seeks to `byteOffset`;
 * the CSV and JSON importers read from the start and pass over `itemIndex` items unwritten.
 */
export interface ImportPosition {
  byteOffset: number;
  itemIndex: number;
}

export const FILE_START: ImportPosition = { byteOffset: 0, itemIndex: 0 };

/** One item read from a file, with where the file stands after it (`next.itemIndex` is the item's index + 1). */
export interface ReadItem<T> {
  item: T;
  next: ImportPosition;
}

/**
 * The file a format reader reads (readers/): opened at any byte, and where to start. Readers only
 * read and parse; they never write (the importers commit what they yield).
 */
export type ImportFile = Pick<StreamImportOptions, 'open' | 'from'>;

/** What an import writes each item with. */
export interface ImportTarget {
  caseId: string;
  organizationId: string;
  /** The file's name, recorded on every item (`import_source`) and in the audit events. */
  importSource: string;
  /** Who imported (`imported_by_id`); null for staff and the system. */
  importedById: string | null;
  /** The profile the items go to: required for professional-network and chat-platform. */
  profileName?: string;
  /** Email only: the mailbox the evidence came from (grantId) and its owner's address (sourceEmail). */
  grantId?: string;
  sourceEmail?: string;
  /** The import job, named in the batches' audit events; absent for a direct file import. */
  importId?: string;
}

/** One committed batch: how many items it read, wrote and found already there. */
export interface BatchCounts {
  read: number;
  imported: number;
  skipped: number;
}

export interface CommittedBatch extends BatchCounts {
  /** Where the next batch starts (the checkpoint this batch commits). */
  next: ImportPosition;
}

export interface StreamImportOptions {
  target: ImportTarget;
  /** The file from byte `start` to its end (a range read of the stored object, or a local file). */
  open(start: number): Promise<Readable>;
  /** Where to start: FILE_START, or the checkpoint the last committed batch left. */
  from: ImportPosition;
  /** Items per batch (each batch is one transaction); the importers have their own defaults. */
  batchSize?: number;
  /**
   * Called inside each batch's transaction after its rows are written, so the job's progress and
   * checkpoint commit with them or not at all.
   */
  onBatch?(tx: Tx, batch: CommittedBatch): Promise<void>;
  /** Checked after each committed batch: true stops there (the invocation's time is nearly up). */
  shouldPause?(): boolean;
}

export interface StreamImportResult extends BatchCounts {
  /** false when shouldPause stopped it before the end of the file. */
  finished: boolean;
  position: ImportPosition;
}

/**
 * A file that cannot be read as its kind: the import stops here, naming the item (0-based
 * `itemIndex`, the count of items before it) and, where the format has lines, the line. What
 * earlier batches committed stays, and the valid items read before it commit as a last batch, so
 * the import's progress ends exactly at the failing item; nothing is half-written.
 */
export class MalformedImportError extends Error {
  /** MALFORMED_FILE; TOO_MANY_ITEMS for the one subclass that stops at an item for its count (limits.ts). */
  readonly code: 'MALFORMED_FILE' | 'TOO_MANY_ITEMS' = 'MALFORMED_FILE';

  constructor(
    message: string,
    readonly itemIndex?: number,
  ) {
    super(message);
    this.name = 'MalformedImportError';
  }
}
