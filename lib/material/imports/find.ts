import { and, eq } from 'drizzle-orm';
import { db } from '../../db/client';
import { evidenceImports } from '../../db/schema/material';
import { idEquals } from '../../ids';
import { ImportNotFoundError } from '../errors';

export type ImportRow = typeof evidenceImports.$inferSelect;

/** The case's import by id (any letter case of it); 404 when the case has none such. */
export async function findImport(caseId: string, importId: string): Promise<ImportRow> {
  const [row] = await db()
    .select()
    .from(evidenceImports)
    .where(and(eq(evidenceImports.caseId, caseId), idEquals(evidenceImports.id, importId)));
  if (!row) throw new ImportNotFoundError();
  return row;
}
