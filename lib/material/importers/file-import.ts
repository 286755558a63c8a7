import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { db } from '../../db/client';
import { cases } from '../../db/schema/cases';
import { idEquals } from '../../ids';
import { ImportCaseNotFoundError } from '../errors';
import { importingUserId } from '../evidence-hash';
import { FILE_START, type ImportTarget, type StreamImportOptions } from './batch';

/** The case an import from the command line names (any letter case of its id); ImportCaseNotFoundError when there is none. */
export async function findImportCase(caseId: string): Promise<{ id: string; organizationId: string }> {
  const [found] = await db()
    .select({ id: cases.id, organizationId: cases.organizationId })
    .from(cases)
    .where(idEquals(cases.id, caseId));
  if (!found) throw new ImportCaseNotFoundError(caseId);
  return found;
}

/**
 * A local file imported whole into a case, directly (importEmailFile and its siblings): the case's
 * organization, the file's name as the items' source, the running user as their importer, and the
 * file read from any byte. ImportCaseNotFoundError when there is no such case.
 */
export async function fileImport(
  caseId: string,
  file: string,
  target: Pick<ImportTarget, 'profileName' | 'grantId' | 'sourceEmail'> = {},
): Promise<StreamImportOptions> {
  const found = await findImportCase(caseId);
  return {
    target: {
      caseId,
      organizationId: found.organizationId,
      importSource: basename(file),
      importedById: importingUserId(),
      ...target,
    },
    open: async (start) => createReadStream(file, { start }),
    from: FILE_START,
  };
}
