import * as z from 'zod/mini';
import { IMPORT_KINDS } from '../../lib/material/importers/batch';
import { DateTime, Id, IdText } from '../common/fields';
import { PageEntity, PagingQuery } from '../common/paging';
import { UploadHeaders } from './material';

/** Largest upload: one presigned PUT stores at most 5 GiB in S3. */
export const MAX_IMPORT_BYTES = 5 * 1024 ** 3;

export const IMPORT_STATUSES = ['awaiting_upload', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const ImportPath = z.object({ caseId: IdText, importId: IdText });

export const ListImportsQuery = z.object({ ...PagingQuery });

/** The file to upload: its name, media type and exact size. */
const ImportFile = {
  fileName: z.string().check(z.trim(), z.minLength(1), z.maxLength(255)),
  contentType: z
    .string()
    .check(z.maxLength(100), z.regex(/^[\w.+-]+\/[\w.+-]+$/, 'Must be a media type such as application/mbox')),
  sizeBytes: z.int().check(z.minimum(1), z.maximum(MAX_IMPORT_BYTES)),
};

/**
 * An mbox or .eml import needs only its file; a messages.csv or ticket export also names the
 * profile its items go to (a union on `kind`, so the API description says so too).
 */
export const CreateImportDto = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('email'), ...ImportFile }),
    z.object({
      kind: z.enum(['professional-network', 'chat-platform']),
      ...ImportFile,
      profile: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
    }),
  ])
  .register(z.globalRegistry, { id: 'CreateImportDto' });

export const ImportEntity = z
  .object({
    id: Id,
    caseId: Id,
    kind: z.enum(IMPORT_KINDS),
    fileName: z.string(),
    contentType: z.string(),
    sizeBytes: z.number(),
    profile: z.nullable(z.string()),
    /** SHA-256 (hex) of the uploaded file, taken as the worker copied it into the case's evidence; null before. */
    sha256: z.nullable(z.string()),
    status: z.enum(IMPORT_STATUSES),
    progress: z.object({
      bytesRead: z.number(),
      totalBytes: z.number(),
      itemsRead: z.number(),
      itemsImported: z.number(),
      itemsSkipped: z.number(),
      /** Whole percent of the file's bytes read (100 once succeeded). */
      percent: z.number(),
    }),
    error: z.nullable(
      z.object({
        code: z.string(),
        message: z.string(),
        /** 0-based index of the item that failed (items before it are in). */
        itemIndex: z.optional(z.number()),
      }),
    ),
    createdBy: z.nullable(Id),
    createdAt: DateTime,
    startedAt: z.nullable(DateTime),
    finishedAt: z.nullable(DateTime),
  })
  .register(z.globalRegistry, { id: 'ImportEntity' });

export const ImportPageEntity = PageEntity(ImportEntity).register(z.globalRegistry, { id: 'ImportPageEntity' });

export const CreateImportResponseEntity = z
  .object({
    import: ImportEntity,
    upload: z.object({
      method: z.literal('PUT'),
      url: z.string(),
      headers: UploadHeaders,
      expiresAt: DateTime,
    }),
  })
  .register(z.globalRegistry, { id: 'CreateImportResponseEntity' });
