/**
 * Which AWS permissions each function gets, beyond what every function has (its own log group,
 * the database credentials secret, the JWT key secret, VPC networking).
 *
 * The route table does not say which AWS services a route uses, so the stack derives it from the
 * function's actual bundle (its source map lists every module the bundle contains):
 *   - mail:     the bundle contains lib/mail/transport.ts (SES sender; the outbox delivers
 *               queued mail after commit)                      -> ses:SendEmail as the identity
 *   - payments: the bundle contains the Stripe SDK (only the processor loads it) -> read the Stripe secret
 *   - storage:  the bundle contains a module that keeps objects (STORAGE_SOURCES) -> s3:GetObject/PutObject (and
 *               s3:DeleteObject where named) under the prefixes below, each on its bucket: `staging/`
 *               and `generated/` on the work bucket, the rest on the evidence bucket (ObjectStore.objectArns)
 *   - answers:  the bundle contains lib/http/large-answers.ts (every route) -> s3:GetObject/PutObject
 *               under `answers/` on the work bucket: an answer over Lambda's limit, and its link
 * and one grant that is named, not derived:
 *   - importQueue: sends `{ importId }` to the import queue      -> sqs:SendMessage on it, and
 *               IMPORT_QUEUE_URL (without it lib/material/imports/queue.ts runs imports in-process)
 *               Every bundle that reaches the material module holds the queue's code, but only the
 *               functions below send; IMPORT_QUEUE_SENDERS names them.
 * A route that cannot reach the code gets nothing, so adding a route never needs an edit here;
 * PERMISSION_OVERRIDES narrows (or widens) the derived set per operationId.
 */

import { relative, resolve, sep } from 'node:path';
import { ANSWER_PREFIX } from '../lib/storage';
import { REPOSITORY_ROOT } from './bundling';

export interface FunctionPermissions {
  mail: boolean;
  payments: boolean;
  /**
   * Object key prefixes (e.g. `cases/`) the function may read (GetObject, HEAD, presigned GET),
   * write (PutObject, presigned PUT, a copy's destination) and delete (DeleteObject).
   */
  storage: {
    read: string[];
    write: string[];
    delete: string[];
    /** Lists the parts of multipart uploads (s3:ListMultipartUploadParts): an import uploaded in parts. */
    listParts?: string[];
    /** Aborts multipart uploads (s3:AbortMultipartUpload), removing their parts. */
    abortUpload?: string[];
    /**
     * Reads a given version of an object (s3:GetObjectVersion): GetObject with a VersionId, in the
     * versioned evidence bucket, as the import worker pins the evidence copy it wrote.
     */
    readVersions?: string[];
  };
  /** May send to the import queue (sqs:SendMessage) and is told its URL (IMPORT_QUEUE_URL). */
  importQueue: boolean;
}

/**
 * Prefixes a storage-using function gets when no override names them (read and write, never
 * delete): the key layout of lib/storage users, `cases/<caseId>/...` for evidence (importers,
 * device-note attachments) and `generated/...` for generated documents (custody and report PDFs).
 * Never `staging/`: only the routes that sign upload links, and what copies out of them, get it.
 */
export const DEFAULT_STORAGE_PREFIXES = ['cases/', 'generated/'];

const NO_OBJECTS: FunctionPermissions['storage'] = { read: [], write: [], delete: [] };

/** Per operationId (or `maintenance`): fields given here replace the derived ones. */
export const PERMISSION_OVERRIDES: Readonly<Record<string, Partial<FunctionPermissions>>> = {
  // lib/billing/report.ts and lib/material/custody.ts write their PDF under generated/, reuse it
  // while nothing it covers changed, and presign a GET for it.
  createBillingReport: { storage: { read: ['generated/'], write: ['generated/'], delete: [] } },
  getCaseCustody: { storage: { read: ['generated/'], write: ['generated/'], delete: [] } },
  // lib/material/custody-exports.ts: the start inserts a row and sends the queue a message; the read
  // presigns a GET for each stored volume (the import worker writes them).
  startCustodyExport: { storage: NO_OBJECTS },
  getCustodyExport: { storage: { read: ['generated/'], write: [], delete: [] } },
  // lib/material/uploads.ts presigns PUTs under staging/cases/<caseId>/notes/ for the desktop
  // extractor; lib/material/notes.ts copies the attachments into cases/<caseId>/ (evidence) and
  // removes them from staging.
  createAttachmentUploads: { storage: { read: [], write: ['staging/'], delete: [] } },
  importCaseNotes: { storage: { read: ['staging/'], write: ['cases/'], delete: ['staging/'] } },
  // lib/material/imports/jobs.ts: createImport presigns the upload's PUT under
  // staging/cases/<caseId>/imports/, or opens its multipart upload (CreateMultipartUpload is
  // s3:PutObject); startImport checks the upload (HeadObject), and for one sent in parts lists
  // them and completes it (CompleteMultipartUpload is s3:PutObject); retry, list and get touch no
  // object. cancelImport aborts an upload in parts and removes the staged file, and aborts the
  // worker's copy into evidence (a multipart upload under cases/) of an import paused mid-copy.
  createImport: { storage: { read: [], write: ['staging/'], delete: [] } },
  startImport: { storage: { read: ['staging/'], write: ['staging/'], delete: [], listParts: ['staging/'] } },
  cancelImport: { storage: { read: [], write: [], delete: ['staging/'], abortUpload: ['staging/', 'cases/'] } },
  // lib/material/imports/multipart.ts: presigned UploadPart links (s3:PutObject), ListParts.
  signImportParts: { storage: { read: [], write: ['staging/'], delete: [] } },
  listImportParts: { storage: { read: [], write: [], delete: [], listParts: ['staging/'] } },
  retryImport: { storage: NO_OBJECTS },
  listImports: { storage: NO_OBJECTS },
  getImport: { storage: NO_OBJECTS },
  // The import worker (infra/functions/import-worker.ts) copies the upload out of staging into the
  // case's evidence and removes it from staging, reads that copy (pinned to the version it wrote),
  // and stores extracted attachments. A large upload is copied by UploadPartCopy into a multipart
  // upload of the evidence key: s3:GetObject on the source (pinned by If-Match: the work bucket is
  // unversioned), s3:PutObject on the target (create, copy parts, complete), and an abort
  // (s3:AbortMultipartUpload on cases/, granted in infra/constructs/imports.ts).
  // It also runs custody exports (lib/material/custody-exports.ts), storing their PDF volumes under generated/,
  // and tagging jobs by filter (lib/review/tagging), which touch no object.
  importWorker: {
    storage: {
      read: ['staging/', 'cases/', 'generated/'],
      write: ['cases/', 'generated/'],
      delete: ['staging/'],
      readVersions: ['cases/'],
    },
  },
  // Maintenance removes uploads never started and expired generated documents (the work bucket's
  // lifecycle rules are the backstop), and sends stalled imports to the queue: the worker code its
  // bundle holds for the local in-process queue never runs where IMPORT_QUEUE_URL is set.
  maintenance: { storage: { read: [], write: [], delete: ['staging/', 'generated/'], abortUpload: ['staging/'] } },
};

/**
 * Functions that send imports to the worker's queue (lib/material/imports/queue.ts enqueueImport):
 * the routes that start, retry and cancel an import, maintenance (requeueStalledImports) and the worker
 * itself (a paused import goes back to the queue).
 */
export const IMPORT_QUEUE_SENDERS: ReadonlySet<string> = new Set([
  'startImport',
  'retryImport',
  // A cancelled import gives its organization's turn to the next queued one.
  'cancelImport',
  // A custody export goes to the same queue (`{ custodyExportId }`): the import worker runs it.
  'startCustodyExport',
  // So does a tagging job by filter (`{ taggingJobId }`).
  'tagEvidence',
  'maintenance',
  'importWorker',
]);

const MAIL_SOURCES = ['lib/mail/transport.ts'];
// The SDK, not lib/billing/processor/stripe.ts: a bundle that reaches the billing index keeps a few
// bytes of that file (its node:crypto import) even when the processor itself is shaken out, and
// only code that can construct the processor (which loads the SDK) reads the Stripe secret.
const PAYMENT_SOURCES = ['node_modules/stripe/'];
/**
 * The modules that use lib/storage for what they keep (evidence, uploads, generated documents):
 * not lib/storage itself, which every route's bundle holds for its large answers
 * (lib/http/large-answers.ts, granted ANSWER_PREFIX alone). test/infra/object-buckets.test.ts
 * checks that every module importing lib/storage is named here.
 */
export const STORAGE_SOURCES = [
  'lib/storage/generated-documents.ts',
  'lib/billing/report.ts',
  'lib/maintenance.ts',
  'lib/material/custody.ts',
  'lib/material/custody-exports.ts',
  'lib/material/evidence-hash.ts',
  'lib/material/importers/email.ts',
  'lib/material/imports/',
  'lib/material/lapsed-uploads.ts',
  'lib/material/notes.ts',
  'lib/material/uploads.ts',
];
/** Every route's chain stores an answer over Lambda's payload limit and presigns its link. */
const ANSWER_SOURCES = ['lib/http/large-answers.ts'];

/** Source-map `sources` (relative to the map's directory) -> repository-relative paths, `node_modules/...` for packages. */
export function normalizeSources(mapDirectory: string, sources: readonly string[]): string[] {
  return sources.map((source) => {
    const path = relative(REPOSITORY_ROOT, resolve(mapDirectory, source)).split(sep).join('/');
    const modules = path.lastIndexOf('node_modules/');
    return modules >= 0 ? path.slice(modules) : path;
  });
}

function contains(sources: readonly string[], needles: readonly string[]): boolean {
  return sources.some((source) =>
    needles.some((needle) =>
      needle.startsWith('node_modules/')
        ? source.startsWith(needle)
        : !source.startsWith('node_modules/') && source.includes(needle),
    ),
  );
}

/** Permissions of a function from the (normalized) sources of its bundle and the overrides. */
export function permissionsFor(name: string, sources: readonly string[]): FunctionPermissions {
  const usesStorage = contains(sources, STORAGE_SOURCES);
  const derived: FunctionPermissions = {
    mail: contains(sources, MAIL_SOURCES),
    payments: contains(sources, PAYMENT_SOURCES),
    storage: usesStorage ? { read: DEFAULT_STORAGE_PREFIXES, write: DEFAULT_STORAGE_PREFIXES, delete: [] } : NO_OBJECTS,
    importQueue: IMPORT_QUEUE_SENDERS.has(name),
  };
  const permissions = { ...derived, ...PERMISSION_OVERRIDES[name] };
  if (!contains(sources, ANSWER_SOURCES)) return permissions;
  const { storage } = permissions;
  return {
    ...permissions,
    storage: { ...storage, read: [...storage.read, ANSWER_PREFIX], write: [...storage.write, ANSWER_PREFIX] },
  };
}
