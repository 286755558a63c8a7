import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { ImportCaseNotesDto } from '../../schemas/material/material';
import { recordAudit } from '../audit/record';
import type { Actor } from '../auth/actor';
import type { CaseContext } from '../cases/context';
import { now } from '../clock';
import { db, type Tx } from '../db/client';
import { evidenceObjects } from '../db/schema/audit';
import { cases, devices } from '../db/schema/cases';
import { deviceNotes } from '../db/schema/material';
import { storageReservations } from '../db/schema/organizations';
import { textArray } from '../db/text-array';
import { transaction } from '../db/transaction';
import { InvalidInputError } from '../errors';
import * as businessMetrics from '../observability/metrics';
import type { PlanUsage } from '../organizations/active-plan';
import type { OrganizationContext } from '../organizations/context';
import { assertDeviceFits, lockAllowances, releasingReservations } from '../organizations/allowances';
import { logger } from '../log';
import { objectStorage } from '../storage/configured-storage';
import { casePrefix, stagingKeyOf } from '../storage/keys';
import { type EvidenceHash, hashCanonical, hashStream, hashWhileStreaming } from './evidence-hash';
import { countBatch, rowBytesOf, storedTextBytes } from './importers/run-batches';

/** Most fields a 400 names at once (a request may carry thousands of notes). */
const MAX_DETAILS = 50;
/** Object-storage lookups in flight at once (a request may reference 500,000 attachments). */
const LOOKUP_CONCURRENCY = 16;

/** A key below the case's prefix, without `..`, empty or `.` segments that could step out of it. */
function isCaseObjectKey(key: string, prefix: string): boolean {
  if (!key.startsWith(prefix) || key.length === prefix.length) return false;
  return key
    .slice(prefix.length)
    .split('/')
    .every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** 400 naming each attachment reference (`notes.N.attachments.M`) that `problem` finds fault with, at most MAX_DETAILS. */
function assertAttachments(notes: NoteInput[], problem: (key: string) => string | null): void {
  const problems = notes.flatMap((note, noteIndex) =>
    (note.attachments ?? []).flatMap((key, index) => {
      const message = problem(key);
      return message ? [{ field: `notes.${noteIndex}.attachments.${index}`, message }] : [];
    }),
  );
  if (problems.length) throw new InvalidInputError(problems.slice(0, MAX_DETAILS));
}

interface AttachmentLookup {
  /** The size of each key in object storage (null: not there). */
  sizes: Map<string, number | null>;
  /** The hash of each object not yet in evidence_objects, taken now. */
  hashed: Map<string, EvidenceHash>;
  /** The uploads copied into evidence: their links are sealed and the uploads removed once the import commits. */
  staged: string[];
}

/**
 * Secures each attachment as evidence, at most LOOKUP_CONCURRENCY at a time: an object already
 * recorded in evidence_objects (linked by an earlier import) is immutable, looked up only for its
 * size; any other is copied from where its upload link put it (stagingKeyOf) into its evidence key,
 * which no link covers, and hashed as it is copied (never held whole), which gives its size too. An
 * object stored at the evidence key itself (a link handed out before uploads were staged) is hashed
 * where it is.
 */
async function secureAttachments(caseId: string, keys: string[]): Promise<AttachmentLookup> {
  const lookup: AttachmentLookup = { sizes: new Map(), hashed: new Map(), staged: [] };
  if (keys.length === 0) return lookup;
  const recordedRows = await db()
    .select({ key: evidenceObjects.key })
    .from(evidenceObjects)
    .where(
      and(
        eq(evidenceObjects.caseId, caseId),
        // One array parameter, however many keys (a request may reference 500,000).
        sql`${evidenceObjects.key} = any(${textArray(keys)})`,
      ),
    );
  const recorded = new Set(recordedRows.map((row) => row.key));
  const storage = objectStorage();
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      if (recorded.has(key)) {
        lookup.sizes.set(key, await storage.size(key));
        continue;
      }
      const staged = await storage.stat(stagingKeyOf(key));
      const upload = staged && (await storage.read(stagingKeyOf(key), { version: staged.version }));
      let hash: EvidenceHash | null;
      if (upload) {
        const copied = hashWhileStreaming(upload);
        await storage.putStream(key, copied.stream, staged.contentType ?? 'application/octet-stream');
        hash = copied.digest();
        lookup.staged.push(stagingKeyOf(key));
      } else {
        const stream = await storage.read(key);
        hash = stream && (await hashStream(stream));
      }
      lookup.sizes.set(key, hash?.sizeBytes ?? null);
      if (hash) lookup.hashed.set(key, hash);
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, keys.length) }, worker));
  return lookup;
}

type ImportCaseNotesInput = z.output<typeof ImportCaseNotesDto>;
type NoteInput = ImportCaseNotesInput['notes'][number];

/**
 * POST /extraction/case/import-notes?caseId=...: registers the device on the case's organization
 * (within the plan's device allowance) and adds the notes. Attachments must already be in object
 * storage: if any reference is missing, nothing is imported (400 listing them). Notes already
 * imported for this device and case (same note id) are left as they are: evidence is append-only.
 *
 * Each note records the SHA-256 and size of its RFC 8785 canonical JSON as the request sent it
 * (after validation, which drops fields the DTO does not name); each attachment is hashed as it
 * streams from storage and recorded in evidence_objects (once: one already recorded is not hashed
 * again). A request that imports any note records one `evidence.notes.imported` event.
 */
export async function importCaseNotes(
  ctx: { actor: Actor; organization: OrganizationContext; caseContext: CaseContext },
  input: ImportCaseNotesInput,
) {
  const { actor, organization } = ctx;
  // The stored id: object keys are built from it (the id sent may differ in letter case).
  const caseId = ctx.caseContext.case.id;

  // Bad input is 400 VALIDATION_FAILED naming the fields (at most MAX_DETAILS of them).
  const seen = new Set<number>();
  const repeated: number[] = [];
  input.notes.forEach((note, index) => {
    if (seen.has(note.id)) repeated.push(index);
    seen.add(note.id);
  });
  if (repeated.length) {
    throw new InvalidInputError(
      repeated.slice(0, MAX_DETAILS).map((index) => ({
        field: `notes.${index}.id`,
        message: `Note id ${input.notes[index]!.id} is repeated in the request`,
      })),
    );
  }

  // References may only name objects of this case: a key elsewhere in the bucket (another
  // organization's evidence) is refused before anything is looked up, so nothing leaks either.
  const prefix = casePrefix(caseId);
  assertAttachments(input.notes, (key) =>
    isCaseObjectKey(key, prefix) ? null : `Attachments must be uploaded under ${prefix}`,
  );

  const references = [...new Set(input.notes.flatMap((note) => note.attachments ?? []))];
  const lookup = await secureAttachments(caseId, references);
  const { sizes } = lookup;
  assertAttachments(input.notes, (key) =>
    sizes.get(key) === null ? `Attachment not found in storage (upload it first): ${key}` : null,
  );

  // The allowance lock is needed when the import may consume an allowance: a device not yet
  // registered, or notes and attachments that may add bytes. Deciding it from a read without a lock is safe:
  // devices are only ever deleted with their organization, so a registered device stays so; if it
  // were gone by the time it is locked, the import starts over with the allowance lock.
  // Notes count in the plan's storage too (their rows), so any note needs it.
  const needsAllowances =
    input.notes.length > 0 || references.length > 0 || !(await deviceRegistered(organization.id, input.deviceId));
  const run = (holdAllowances: boolean) =>
    importInTransaction(organization.id, actor, caseId, input, lookup, holdAllowances);
  const { imported, deviceRowId } = await run(needsAllowances).catch((error: unknown) => {
    if (error instanceof AllowanceLockNeeded) return run(true);
    throw error;
  });
  await releaseUploads(lookup.staged);
  const skipped = input.notes.length - imported;
  businessMetrics.itemsImported('device-notes', imported);
  return {
    isSuccess: true,
    message: `Imported ${imported} note(s) from device ${input.deviceId}${skipped ? `; ${skipped} already imported` : ''}`,
    deviceRegistrationId: deviceRowId,
    importedCount: imported,
    skippedCount: skipped,
  };
}

/**
 * After the import committed: the links of the uploads it copied into evidence are sealed (the
 * local store refuses later PUTs) and the uploads removed. A failure here changes no evidence (it
 * is logged; the staging lifecycle removes what is left).
 */
async function releaseUploads(stagingKeys: string[]): Promise<void> {
  const storage = objectStorage();
  await Promise.all(
    stagingKeys.map(async (key) => {
      try {
        await storage.seal(key);
        await storage.delete(key);
      } catch (error) {
        logger.warn('could not release a device-note upload', { error, key });
      }
    }),
  );
}

/** Thrown inside the import's transaction when it finds it needs the allowance lock it did not take. */
class AllowanceLockNeeded extends Error {}

async function deviceRegistered(organizationId: string, deviceId: string): Promise<boolean> {
  const [row] = await db()
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.organizationId, organizationId), eq(devices.deviceId, deviceId)));
  return Boolean(row);
}

/**
 * One import, in one transaction, in a fixed number of statements whatever the number of notes.
 *
 * Lock order, the same for every path (lib/organizations/allowances.ts): the allowance lock (the
 * organization's plan row) first, then the case row, then the device row. The email importer takes
 * the plan row and then writes the case row, so an import that locked its case before the plan row
 * (as this did) could deadlock with it; taking the plan row first cannot. Imports that need no
 * allowance skip the plan row and start at the case row, which keeps the same order. The device
 * row is locked last, and only by imports, so two imports of one device into two cases cannot wait
 * on each other in a circle.
 */
async function importInTransaction(
  organizationId: string,
  actor: Actor,
  caseId: string,
  input: ImportCaseNotesInput,
  lookup: AttachmentLookup,
  holdAllowances: boolean,
): Promise<{ imported: number; deviceRowId: string }> {
  return transaction(async (tx) => {
    const usage = holdAllowances ? await lockAllowances(tx, organizationId) : null;
    // Imports into one case take turns, so an attachment two of them link is counted once.
    await tx.select({ id: cases.id }).from(cases).where(eq(cases.id, caseId)).for('no key update');
    // Under the allowance lock, a concurrent import of the same new device has committed by now and is found here.
    const [known] = await tx
      .select({ id: devices.id })
      .from(devices)
      .where(and(eq(devices.organizationId, organizationId), eq(devices.deviceId, input.deviceId)))
      .for('update');
    let deviceRowId = known?.id;
    const metadata = {
      ...input.deviceMetadata,
      systemId: input.systemId,
      appVersion: input.appVersion,
      osDetails: input.osDetails,
    };
    if (!deviceRowId) {
      if (!usage) throw new AllowanceLockNeeded();
      assertDeviceFits(usage);
      const [created] = await tx
        .insert(devices)
        .values({ organizationId, deviceId: input.deviceId, deviceType: input.deviceType, metadata })
        .onConflictDoUpdate({ target: [devices.organizationId, devices.deviceId], set: { metadata } })
        .returning({ id: devices.id });
      deviceRowId = created!.id;
    } else {
      await tx.update(devices).set({ metadata, deviceType: input.deviceType }).where(eq(devices.id, deviceRowId));
    }
    if (input.notes.length === 0) return { imported: 0, deviceRowId };
    // Each note's stored text is counted from the note as the request sent it (rowBytesOf).
    const textOf = new Map(input.notes.map((note) => [note.id, storedTextBytes(note)]));
    const inserted = await tx
      .insert(deviceNotes)
      .values(
        input.notes.map((note) => ({
          ...hashCanonical(note),
          caseId,
          deviceId: deviceRowId!,
          noteId: note.id,
          title: note.title,
          summary: note.summary ?? null,
          noteCreatedAt: note.createdAt ?? null,
          noteModifiedAt: note.modifiedAt ?? null,
          htmlContent: note.htmlContent ?? null,
          metadata: note.metadata ?? {},
          attachmentKeys: note.attachments ?? [],
          importedById: actor.user.id,
        })),
      )
      .onConflictDoNothing()
      .returning({ id: deviceNotes.id, noteId: deviceNotes.noteId, attachmentKeys: deviceNotes.attachmentKeys });
    const rowBytes = rowBytesOf(
      'deviceNote',
      inserted.length,
      inserted.reduce((sum, note) => sum + (textOf.get(note.noteId) ?? 0), 0),
    );
    await countImportedBytes(tx, { organizationId, caseId, usage }, inserted, lookup.sizes, rowBytes);
    const linked = [...new Set(inserted.flatMap((note) => note.attachmentKeys))];
    await recordEvidenceObjects(
      tx,
      caseId,
      linked.flatMap((key) => {
        const hash = lookup.hashed.get(key);
        return hash ? [{ key, ...hash }] : [];
      }),
    );
    if (inserted.length)
      recordAudit(tx, {
        action: 'evidence.notes.imported',
        organizationId,
        caseId,
        target: { type: 'device', id: deviceRowId },
        metadata: {
          deviceId: input.deviceId,
          imported: inserted.length,
          skipped: input.notes.length - inserted.length,
          attachments: linked.length,
        },
      });
    return { imported: inserted.length, deviceRowId };
  });
}

/**
 * Adds the bytes of the attachments that the notes just inserted link to the case's storage (what
 * the plan's storage figures and storage-stats add up), and the bytes of the notes' rows
 * (`rowBytes`). A key counts once per case: one an earlier note of the case already links is not
 * counted again. The bytes must fit in the plan's storage (403 STORAGE_LIMIT_REACHED, and the
 * whole import is rolled back), counted under the allowance lock without the upload-link
 * reservations of the linked keys: those are consumed here, their declared sizes replaced by the
 * actual ones.
 */
async function countImportedBytes(
  tx: Tx,
  target: { organizationId: string; caseId: string; usage: PlanUsage | null },
  inserted: Array<{ id: string; attachmentKeys: string[] }>,
  sizes: Map<string, number | null>,
  rowBytes: number,
) {
  const { organizationId, caseId } = target;
  if (inserted.length === 0) return;
  // Notes always come with the allowance lock (importCaseNotes takes it when there are any).
  const usage = target.usage;
  if (!usage) throw new AllowanceLockNeeded();
  const keys = [...new Set(inserted.flatMap((note) => note.attachmentKeys))];
  if (keys.length === 0) {
    await countBatch(tx, caseId, usage, { rowBytes });
    return;
  }
  const keyArray = sql`array[${sql.join(
    keys.map((key) => sql`${key}`),
    sql`, `,
  )}]::text[]`;
  const [linkedBefore, consumed] = await Promise.all([
    tx
      .selectDistinct({ key: sql<string>`unnest(${deviceNotes.attachmentKeys})` })
      .from(deviceNotes)
      .where(
        and(
          eq(deviceNotes.caseId, caseId),
          notInArray(
            deviceNotes.id,
            inserted.map((note) => note.id),
          ),
          sql`${deviceNotes.attachmentKeys} && ${keyArray}`,
        ),
      ),
    tx
      .delete(storageReservations)
      .where(
        and(
          eq(storageReservations.organizationId, organizationId),
          // Links reserve their staging key (those handed out before uploads were staged: the key itself).
          inArray(storageReservations.objectKey, [...keys, ...keys.map(stagingKeyOf)]),
        ),
      )
      .returning({ bytes: storageReservations.bytes }),
  ]);
  const counted = new Set(linkedBefore.map((row) => row.key));
  const bytes = keys.filter((key) => !counted.has(key)).reduce((sum, key) => sum + (sizes.get(key) ?? 0), 0);
  // Every reservation counts in the usage until it is taken over or its lapsed upload removed, expired or not.
  const released = consumed.reduce((sum, row) => sum + row.bytes, 0);
  await countBatch(tx, caseId, releasingReservations(usage, released), { objectBytes: bytes, rowBytes });
}

/**
 * Records the hashes taken of attachments the import links (evidence_objects, which downloads
 * check), in one statement of three array parameters however many there are. An object recorded
 * meanwhile by a concurrent import of the same key keeps its row.
 */
async function recordEvidenceObjects(tx: Tx, caseId: string, objects: Array<{ key: string } & EvidenceHash>) {
  if (objects.length === 0) return;
  const textArray = (values: string[]) => sql.param(values, deviceNotes.attachmentKeys);
  await tx.execute(sql`
    insert into ${evidenceObjects} (key, case_id, sha256, size_bytes, recorded_at)
    select object.key, ${caseId}::uuid, object.sha256, object.size_bytes::bigint, ${sql.param(now(), evidenceObjects.recordedAt)}
    from unnest(
      ${textArray(objects.map((o) => o.key))}::text[],
      ${textArray(objects.map((o) => o.sha256))}::text[],
      ${textArray(objects.map((o) => String(o.sizeBytes)))}::text[]
    ) as object(key, sha256, size_bytes)
    on conflict (key) do nothing`);
}
