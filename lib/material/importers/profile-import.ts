import type { AuditEventInput } from '../../audit/record';
import type { Tx } from '../../db/client';
import type { BatchCounts, ImportFile, ImportKind, ReadItem, StreamImportOptions, StreamImportResult } from './batch';
import type { ImportSummary } from './email';
import { fileImport } from './file-import';
import { atMostMaxItems, IMPORT_LIMITS } from './limits';
import { ensureProfile } from './profiles';
import {
  batchSizeOf,
  batchTransaction,
  countBatch,
  endBatch,
  importInBatches,
  type RowKind,
  rowBytesOf,
} from './run-batches';

/**
 * An import into one profile of a case (the professional network's messages, the chat platform's
 * tickets): what its kind reads and writes. The rest is the same for both (importIntoProfile).
 */
export interface ProfileImporter<T extends { weight: number }> {
  kind: Exclude<ImportKind, 'email'>;
  platform: 'professional_network' | 'chat_platform';
  /** The format reader (readers/): the file's items from `file.from` on, each with its weight in memory. */
  read(file: ImportFile): AsyncIterable<ReadItem<T>>;
  /** Items per batch when the caller names none. */
  batchSize: number;
  /** What each written item counts in the plan's storage beyond its stored text (rowBytesOf). */
  rowKind: RowKind;
  /** The event each batch that adds items records. */
  action: AuditEventInput['action'];
  /**
   * Writes the batch's rows for the profile inside the batch's transaction: the ids of the rows
   * written and their stored text (insertItems).
   */
  write(
    tx: Tx,
    options: StreamImportOptions,
    profileId: string,
    batch: ReadItem<T>[],
  ): Promise<{ ids: string[]; textBytes: number }>;
}

/**
 * Imports `options`' file into the profile `target.profileName` of the case (created on first
 * import), streaming it through the importer's reader and committing in batches (importInBatches).
 * Each batch is one transaction: the profile, the importer's rows, their bytes counted into the
 * plan's storage (countBatch), one `action` event when it added items (endBatch).
 */
export async function importIntoProfile<T extends { weight: number }>(
  importer: ProfileImporter<T>,
  options: StreamImportOptions,
): Promise<StreamImportResult> {
  if (!options.target.profileName) throw new Error(`A ${importer.kind} import needs the profile it goes to`);
  return importInBatches(
    options,
    atMostMaxItems(importer.read(options)),
    {
      size: batchSizeOf(options, importer.batchSize),
      maxWeight: IMPORT_LIMITS.batchChars,
      weigh: (item) => item.weight,
    },
    (batch, firstItemIndex) => commitToProfile(importer, options, batch, firstItemIndex),
  );
}

async function commitToProfile<T extends { weight: number }>(
  importer: ProfileImporter<T>,
  options: StreamImportOptions,
  batch: ReadItem<T>[],
  firstItemIndex: number,
): Promise<BatchCounts> {
  const { caseId, profileName } = options.target;
  return batchTransaction(options, async (tx, usage) => {
    const profileId = await ensureProfile(tx, caseId, importer.platform, profileName!);
    const inserted = await importer.write(tx, options, profileId, batch);
    await countBatch(tx, caseId, usage, {
      rowBytes: rowBytesOf(importer.rowKind, inserted.ids.length, inserted.textBytes),
    });
    return endBatch(tx, options, batch, {
      action: importer.action,
      target: { type: 'profile', id: profileId },
      firstItemIndex,
      imported: inserted.ids.length,
    });
  });
}

/** Imports a local file into a profile of a case at once (importIntoProfile: streamed, committed in batches). */
export async function importFileIntoProfile<T extends { weight: number }>(
  importer: ProfileImporter<T>,
  caseId: string,
  file: string,
  profileName: string,
): Promise<ImportSummary> {
  const { read, imported, skipped } = await importIntoProfile(
    importer,
    await fileImport(caseId, file, { profileName }),
  );
  return { read, imported, skipped };
}
