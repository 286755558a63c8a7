import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { eq } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { countStoredBytes } from '../../cases/stored-bytes';
import { now } from '../../clock';
import { db } from '../../db/client';
import { evidenceImports } from '../../db/schema/material';
import { transaction } from '../../db/transaction';
import { newId } from '../../ids';
import { planUsageByOrganization } from '../../organizations/active-plan';
import { assertStorageFits, lockAllowances } from '../../organizations/allowances';
import { objectStorage } from '../../storage/configured-storage';
import { casePrefix } from '../../storage/keys';
import type { ImportKind } from '../importers/batch';
import { findImportCase } from '../importers/file-import';
import { importingUserId } from '../evidence-hash';
import type { ImportRow } from './jobs';
import { type ImportRunOptions, runImport } from './run';
import { keySafe } from '../uploads';

const CONTENT_TYPES: Record<ImportKind, string> = {
  email: 'application/mbox',
  'professional-network': 'text/csv',
  'chat-platform': 'application/json',
};

/**
 * What `npm run admin -- import ...` does: the same import job as the API's, with the file on this
 * machine instead of an upload. The file is stored as the case's source evidence (counted in its
 * storage under the allowance lock, 403 STORAGE_LIMIT_REACHED when it does not fit), the import is
 * recorded as created and started, and the worker runs it here in the foreground.
 */
export async function importLocalFile(
  input: { kind: ImportKind; caseId: string; file: string; profileName?: string },
  options: Pick<ImportRunOptions, 'onProgress' | 'batchSize'> = {},
): Promise<ImportRow> {
  const target = await findImportCase(input.caseId);
  const { size } = await stat(input.file);
  const id = newId();
  const fileName = basename(input.file);
  const objectKey = `${casePrefix(target.id)}imports/${id}-${keySafe(fileName)}`;
  const contentType = CONTENT_TYPES[input.kind];
  // Checked before storing (nothing left behind when it cannot fit), again under the lock after.
  const usage = (await planUsageByOrganization(db(), [target.organizationId])).get(target.organizationId);
  if (usage) assertStorageFits(usage, size);
  // Stored first: the import is only queued once its file is there for the worker.
  await objectStorage().putStream(objectKey, createReadStream(input.file), contentType);
  await transaction(async (tx) => {
    const usage = await lockAllowances(tx, target.organizationId);
    assertStorageFits(usage, size);
    await tx.insert(evidenceImports).values({
      id,
      organizationId: target.organizationId,
      caseId: target.id,
      kind: input.kind,
      fileName,
      contentType,
      sizeBytes: size,
      profile: input.kind === 'email' ? null : (input.profileName ?? null),
      objectKey,
      status: 'queued',
      queuedAt: now(),
      createdById: importingUserId(),
    });
    await countStoredBytes(tx, target.id, { objectBytes: size });
    for (const action of ['evidence.import.created', 'evidence.import.started'] as const)
      recordAudit(tx, {
        action,
        organizationId: target.organizationId,
        caseId: target.id,
        target: { type: 'import', id },
        metadata: { kind: input.kind, fileName, sizeBytes: size, key: objectKey },
      });
  });
  let last: ImportRow | undefined;
  await runImport(id, {
    ...options,
    onProgress: (row) => {
      last = row;
      options.onProgress?.(row);
    },
  });
  return last ?? (await db().select().from(evidenceImports).where(eq(evidenceImports.id, id)))[0]!;
}
