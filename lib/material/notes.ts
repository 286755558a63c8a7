import { and, eq, notInArray, sql } from 'drizzle-orm';
import { assertCaseRule, caseWithAccess } from '../cases/access';
import { CASE_RULES } from '../cases/rules';
import type { Tx } from '../db/client';
import { cases, devices, deviceNotes } from '../db/schema';
import { transaction } from '../db/transaction';
import { ForbiddenError, ValidationFailedError } from '../http/errors';
import type { Actor, OrganizationContext } from '../http/types';
import { planUsageByOrganization } from '../organizations/active-plan';
import { casePrefix, objectStorage } from '../storage';

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

/** 400 naming each attachment reference (`body.notes.N.attachments.M`) that `problem` finds fault with, at most MAX_DETAILS. */
function assertAttachments(notes: NoteInput[], problem: (key: string) => string | null): void {
  const details = notes.flatMap((note, noteIndex) =>
    (note.attachments ?? []).flatMap((key, index) => {
      const message = problem(key);
      return message ? [{ path: `body.notes.${noteIndex}.attachments.${index}`, message }] : [];
    }),
  );
  if (details.length) throw new ValidationFailedError(details.slice(0, MAX_DETAILS));
}

/** The size of each key in object storage (null: not there), looked up at most LOOKUP_CONCURRENCY at a time. */
async function objectSizes(keys: string[]): Promise<Map<string, number | null>> {
  const storage = objectStorage();
  const sizes = new Map<string, number | null>();
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      sizes.set(key, await storage.size(key));
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, keys.length) }, worker));
  return sizes;
}

export interface NoteInput {
  id: number;
  title: string;
  summary?: string;
  createdAt?: string;
  modifiedAt?: string;
  htmlContent?: string;
  metadata?: Record<string, unknown>;
  attachments?: string[];
}

export interface ImportNotesInput {
  deviceId: string;
  deviceType: (typeof devices.$inferInsert)['deviceType'];
  deviceMetadata?: Record<string, unknown>;
  systemId: string;
  appVersion: string;
  osDetails: Record<string, unknown>;
  notes: NoteInput[];
}

/**
 * POST /extraction/case/import-notes?caseId=...: registers the device on the case's organization
 * (within the plan's device allowance) and adds the notes. Attachments must already be in object
 * storage: if any reference is missing, nothing is imported (400 listing them). Notes already
 * imported for this device and case (same note id) are left as they are: evidence is append-only.
 */
export async function importNotes(organization: OrganizationContext, actor: Actor, caseId: string, input: ImportNotesInput) {
  const found = await caseWithAccess(caseId, actor.user.id, organization.id);
  assertCaseRule(found, CASE_RULES.import, 'Importing evidence needs owner or admin access to the case');

  // Bad input is 400 VALIDATION_FAILED naming the fields (at most MAX_DETAILS of them).
  const seen = new Set<number>();
  const repeated = input.notes.flatMap((note, index) => (seen.has(note.id) ? [index] : (seen.add(note.id), [])));
  if (repeated.length) {
    throw new ValidationFailedError(
      repeated.slice(0, MAX_DETAILS).map((index) => ({ path: `body.notes.${index}.id`, message: `Note id ${input.notes[index]!.id} is repeated in the request` })),
    );
  }

  // References may only name objects of this case: a key elsewhere in the bucket (another
  // organization's evidence) is refused before anything is looked up, so nothing leaks either.
  const prefix = casePrefix(caseId);
  assertAttachments(input.notes, (key) => (isCaseObjectKey(key, prefix) ? null : `Attachments must be uploaded under ${prefix}`));

  const references = [...new Set(input.notes.flatMap((note) => note.attachments ?? []))];
  const sizes = await objectSizes(references);
  assertAttachments(input.notes, (key) => (sizes.get(key) === null ? `Attachment not found in storage (upload it first): ${key}` : null));

  const { imported, deviceRowId } = await transaction(async (tx) => {
    // Imports into one case take turns, so an attachment two of them link is counted once.
    await tx.select({ id: cases.id }).from(cases).where(eq(cases.id, caseId)).for('no key update');
    const [known] = await tx
      .select({ id: devices.id })
      .from(devices)
      .where(and(eq(devices.organizationId, organization.id), eq(devices.deviceId, input.deviceId)))
      .for('update');
    let deviceRowId = known?.id;
    const metadata = { ...input.deviceMetadata, systemId: input.systemId, appVersion: input.appVersion, osDetails: input.osDetails };
    if (!deviceRowId) {
      const usage = (await planUsageByOrganization(tx, [organization.id])).get(organization.id);
      if (usage && usage.devicesUsed >= usage.plan.devices) {
        throw new ForbiddenError(`The plan allows ${usage.plan.devices} devices and all are registered`, 'DEVICE_LIMIT_REACHED');
      }
      const [created] = await tx
        .insert(devices)
        .values({ organizationId: organization.id, deviceId: input.deviceId, deviceType: input.deviceType, metadata })
        .onConflictDoUpdate({ target: [devices.organizationId, devices.deviceId], set: { metadata } })
        .returning({ id: devices.id });
      deviceRowId = created!.id;
    } else {
      await tx.update(devices).set({ metadata, deviceType: input.deviceType }).where(eq(devices.id, deviceRowId));
    }
    if (input.notes.length === 0) return { imported: 0, deviceRowId };
    const inserted = await tx
      .insert(deviceNotes)
      .values(
        input.notes.map((note) => ({
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
      .returning({ id: deviceNotes.id, attachmentKeys: deviceNotes.attachmentKeys });
    await countAttachmentBytes(tx, caseId, inserted, sizes);
    return { imported: inserted.length, deviceRowId };
  });
  const skipped = input.notes.length - imported;
  return {
    isSuccess: true,
    message: `Imported ${imported} note(s) from device ${input.deviceId}${skipped ? `; ${skipped} already imported` : ''}`,
    deviceRegistrationId: deviceRowId,
    importedCount: imported,
    skippedCount: skipped,
  };
}

/**
 * Adds the bytes of the attachments that the notes just inserted link to the case's storage (what
 * the plan's storage figures and storage-stats add up). A key counts once per case: one an
 * earlier note of the case already links is not counted again.
 */
async function countAttachmentBytes(tx: Tx, caseId: string, inserted: Array<{ id: string; attachmentKeys: string[] }>, sizes: Map<string, number | null>) {
  const keys = [...new Set(inserted.flatMap((note) => note.attachmentKeys))];
  if (keys.length === 0) return;
  const keyArray = sql`array[${sql.join(
    keys.map((key) => sql`${key}`),
    sql`, `,
  )}]::text[]`;
  const linkedBefore = await tx
    .selectDistinct({ key: sql<string>`unnest(${deviceNotes.attachmentKeys})` })
    .from(deviceNotes)
    .where(and(eq(deviceNotes.caseId, caseId), notInArray(deviceNotes.id, inserted.map((note) => note.id)), sql`${deviceNotes.attachmentKeys} && ${keyArray}`));
  const counted = new Set(linkedBefore.map((row) => row.key));
  const bytes = keys.filter((key) => !counted.has(key)).reduce((sum, key) => sum + (sizes.get(key) ?? 0), 0);
  if (bytes > 0) await tx.update(cases).set({ storageBytes: sql`${cases.storageBytes} + ${bytes}` }).where(eq(cases.id, caseId));
}
