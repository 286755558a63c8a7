/**
 * Which AWS permissions each function gets, beyond what every function has (its own log group,
 * the database credentials secret, the JWT key secret, VPC networking).
 *
 * The route table does not say which AWS services a route uses, so the stack derives it from the
 * function's actual bundle (its source map lists every module the bundle contains):
 *   - mail:     the bundle contains lib/mail/transport.ts (SES sender; the outbox delivers
 *               queued mail after commit)                      -> ses:SendEmail as the identity
 *   - payments: the bundle contains the Stripe SDK (only the processor loads it) -> read the Stripe secret
 *   - storage:  the bundle contains lib/storage                 -> s3:GetObject/PutObject on
 *               the object bucket, under the prefixes below
 * and one grant that is named, not derived:
 *   - importQueue: sends `{ importId }` to the import queue      -> sqs:SendMessage on it, and
 *               IMPORT_QUEUE_URL (without it lib/material/imports/queue.ts runs imports in-process)
 *               Every bundle that reaches the material module holds the queue's code, but only the
 *               functions below send; IMPORT_QUEUE_SENDERS names them.
 * A route that cannot reach the code gets nothing, so adding a route never needs an edit here;
 * PERMISSION_OVERRIDES narrows (or widens) the derived set per operationId.
 */

import { relative, resolve, sep } from 'node:path';
import { REPOSITORY_ROOT } from './bundling';

export interface FunctionPermissions {
  mail: boolean;
  payments: boolean;
  /** Object key prefixes (e.g. `reports/`) the function may read (GetObject, HEAD, presigned GET) and write (PutObject). */
  storage: { read: string[]; write: string[] };
  /** May send to the import queue (sqs:SendMessage) and is told its URL (IMPORT_QUEUE_URL). */
  importQueue: boolean;
}

/**
 * Prefixes a storage-using function gets when no override names them: the key layout of
 * lib/storage users, `cases/<caseId>/...` for evidence (importers, device-note attachments) and
 * `reports/<organizationId>/...` for billing reports.
 */
export const DEFAULT_STORAGE_PREFIXES = ['cases/', 'reports/'];

/** Per operationId (or `maintenance`): fields given here replace the derived ones. */
export const PERMISSION_OVERRIDES: Readonly<Record<string, Partial<FunctionPermissions>>> = {
  // lib/billing/report.ts writes reports/<organizationId>/... and presigns a GET for it.
  createBillingReport: { storage: { read: ['reports/'], write: ['reports/'] } },
  // lib/material/notes.ts only checks that attachments exist under cases/<caseId>/ (HeadObject).
  importCaseNotes: { storage: { read: ['cases/'], write: [] } },
  // lib/material/uploads.ts presigns PUTs under cases/<caseId>/notes/ for the desktop extractor.
  createAttachmentUploads: { storage: { read: [], write: ['cases/'] } },
  // lib/material/imports/jobs.ts: createImport presigns the upload's PUT under cases/<caseId>/imports/,
  // startImport checks the uploaded size (HeadObject); retry, list and get touch no object.
  createImport: { storage: { read: [], write: ['cases/'] } },
  startImport: { storage: { read: ['cases/'], write: [] } },
  retryImport: { storage: { read: [], write: [] } },
  listImports: { storage: { read: [], write: [] } },
  getImport: { storage: { read: [], write: [] } },
  // The import worker (infra/functions/import-worker.ts) reads uploads and stores extracted attachments.
  importWorker: { storage: { read: ['cases/'], write: ['cases/'] } },
  // Maintenance only sends stalled imports to the queue; the worker code its bundle holds for the
  // local in-process queue never runs where IMPORT_QUEUE_URL is set.
  maintenance: { storage: { read: [], write: [] } },
};

/**
 * Functions that send imports to the worker's queue (lib/material/imports/queue.ts enqueueImport):
 * the routes that start and retry an import, maintenance (requeueStalledImports) and the worker
 * itself (a paused import goes back to the queue).
 */
export const IMPORT_QUEUE_SENDERS: ReadonlySet<string> = new Set([
  'startImport',
  'retryImport',
  'maintenance',
  'importWorker',
]);

const MAIL_SOURCES = ['lib/mail/transport.ts'];
// The SDK, not lib/billing/processor/stripe.ts: a bundle that reaches the billing index keeps a few
// bytes of that file (its node:crypto import) even when the processor itself is shaken out, and
// only code that can construct the processor (which loads the SDK) reads the Stripe secret.
const PAYMENT_SOURCES = ['node_modules/stripe/'];
const STORAGE_SOURCES = ['lib/storage/'];

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
    storage: usesStorage
      ? { read: DEFAULT_STORAGE_PREFIXES, write: DEFAULT_STORAGE_PREFIXES }
      : { read: [], write: [] },
    importQueue: IMPORT_QUEUE_SENDERS.has(name),
  };
  return { ...derived, ...PERMISSION_OVERRIDES[name] };
}
