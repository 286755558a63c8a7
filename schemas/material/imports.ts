import * as z from 'zod/mini';
import { IMPORT_KINDS } from '../../lib/material/importers/batch';
import { DateTime, Id, IdText } from '../common/fields';
import { PageEntity, PagingQuery } from '../common/paging';
import { UploadHeaders } from './material';

/** Largest file sent with one PUT: one presigned PUT stores at most 5 GiB in S3; larger files go in parts. */
export const MAX_SINGLE_UPLOAD_BYTES = 5 * 1024 ** 3;

/** Largest import: S3's largest object, 5 TiB, uploaded in parts (multipart). */
export const MAX_IMPORT_BYTES = 5 * 1024 ** 4;

/** Part links one call of the parts route signs. */
export const MAX_PARTS_PER_CALL = 100;

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
 * How the file is sent: one PUT (up to 5 GiB, the default there) or in parts (multipart: always
 * above 5 GiB, and for any size when asked, so a client can resume a dropped upload).
 */
const UploadChoice = { upload: z.optional(z.enum(['single', 'multipart'])) };

/**
 * An mbox or .eml import needs only its file; a messages.csv or ticket export also names the
 * profile its items go to (a union on `kind`, so the API description says so too).
 */
export const CreateImportDto = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('email'), ...ImportFile, ...UploadChoice }),
    z.object({
      kind: z.enum(['professional-network', 'chat-platform']),
      ...ImportFile,
      profile: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
      ...UploadChoice,
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

/** A file sent in parts: where to ask for part links, and how the file is cut. */
const MultipartUpload = z.object({
  method: z.literal('MULTIPART'),
  /** Bytes of every part but the last, which is the remainder. */
  partSize: z.number(),
  partCount: z.number(),
  /** POST here `{ partNumbers }` for signed PUT links of parts; GET it for the parts that arrived. */
  partsUrl: z.string(),
  /** Until when parts may be uploaded (the reservation of the declared size lasts as long). */
  expiresAt: DateTime,
});

export const CreateImportResponseEntity = z
  .object({
    import: ImportEntity,
    upload: z.union([
      z.object({
        method: z.literal('PUT'),
        url: z.string(),
        headers: UploadHeaders,
        expiresAt: DateTime,
      }),
      MultipartUpload,
    ]),
  })
  .register(z.globalRegistry, { id: 'CreateImportResponseEntity' });

export const SignImportPartsDto = z
  .object({
    /** Part numbers (1 to the import's partCount), at most 100 a call, each once. */
    partNumbers: z.array(z.int().check(z.minimum(1), z.maximum(10_000))).check(
      z.minLength(1),
      z.maxLength(MAX_PARTS_PER_CALL),
      z.refine((numbers) => new Set(numbers).size === numbers.length, 'Each part number at most once'),
    ),
  })
  .register(z.globalRegistry, { id: 'SignImportPartsDto' });

export const ImportPartLinksEntity = z
  .object({
    parts: z.array(
      z.object({
        partNumber: z.number(),
        /** The part's exact size: the PUT sends these bytes and their Content-MD5. */
        sizeBytes: z.number(),
        method: z.literal('PUT'),
        url: z.string(),
        headers: UploadHeaders,
      }),
    ),
    expiresAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'ImportPartLinksEntity' });

export const ImportPartsEntity = z
  .object({
    partSize: z.number(),
    partCount: z.number(),
    /** The parts that arrived, by number: a client whose upload dropped sends the others. */
    parts: z.array(z.object({ partNumber: z.number(), sizeBytes: z.number(), etag: z.string() })),
  })
  .register(z.globalRegistry, { id: 'ImportPartsEntity' });
