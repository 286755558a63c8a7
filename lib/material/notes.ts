import { and, eq } from 'drizzle-orm';
import { caseWithAccess } from '../cases/access';
import { devices, deviceNotes } from '../db/schema';
import { transaction } from '../db/transaction';
import { BadRequestError, ForbiddenError } from '../http/errors';
import type { Actor, OrganizationContext } from '../http/types';
import { planUsageByOrganization } from '../organizations/active-plan';
import { objectStorage } from '../storage';

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
  if (found.access !== 'owner' && found.access !== 'admin') throw new ForbiddenError('Importing evidence needs owner or admin access to the case', 'INSUFFICIENT_ROLE');

  const references = [...new Set(input.notes.flatMap((note) => note.attachments ?? []))];
  const storage = objectStorage();
  const present = await Promise.all(references.map((key) => storage.exists(key)));
  const missing = references.filter((_, index) => !present[index]);
  if (missing.length) throw new BadRequestError(`Attachments not found in storage (upload them first): ${missing.slice(0, 20).join(', ')}`);

  const duplicateIds = input.notes.map((n) => n.id).filter((id, index, all) => all.indexOf(id) !== index);
  if (duplicateIds.length) throw new BadRequestError(`Note ids repeated in the request: ${[...new Set(duplicateIds)].join(', ')}`);

  const { imported, deviceRowId } = await transaction(async (tx) => {
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
      .returning({ id: deviceNotes.id });
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
