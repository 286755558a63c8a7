import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { db } from '../../lib/db/client';
import { cases, emails, emailTags, emailThreads, materialProfiles } from '../../lib/db/schema';
import { FILE_START, importEmailStream } from '../../lib/material/importers';
import { routes } from '../../functions/routes';
import type { TestUser } from './actors';
import { caseWithOwner } from './cases';
import { invoke } from './invoke';
import { createTagRow } from './tags';

/** A case tag with no side (as an import leaves it: the firm's), written directly. */
export const createTag = (organizationId: string, caseId: string, name: string) =>
  createTagRow({ organizationId, caseId, type: 'case', name });

export interface SeedEmail {
  from?: string;
  to?: string[];
  cc?: string[];
  folders?: string[];
  starred?: boolean;
  unread?: boolean;
  tagIds?: string[];
  removedTagIds?: string[];
  minute: number;
}

/** A thread with the given emails (dated 2026-11-01 plus `minute` minutes), rows written directly. */
export async function seedThread(caseId: string, specs: SeedEmail[]) {
  const [thread] = await db()
    .insert(emailThreads)
    .values({
      caseId,
      rootMessageId: `<${randomBytes(6).toString('hex')}@seed>`,
      subject: 'Seeded',
      messageCount: specs.length,
    })
    .returning();
  const ids: string[] = [];
  for (const [index, spec] of specs.entries()) {
    const from = spec.from ?? 'ann@lee.example';
    const to = spec.to ?? ['bob@roe.example'];
    const cc = spec.cc ?? [];
    const participants = [from, ...to, ...cc].map((a) => a.toLowerCase());
    const [email] = await db()
      .insert(emails)
      .values({
        caseId,
        threadId: thread!.id,
        grantId: 'seed',
        externalId: `<${randomBytes(6).toString('hex')}@seed>`,
        sourceEmail: 'ann@lee.example',
        subject: `Email ${index}`,
        body: `Body ${index}`,
        date: new Date(Date.UTC(2026, 10, 1, 0, spec.minute)),
        from: [{ email: from }],
        to: to.map((email) => ({ email })),
        cc: cc.map((email) => ({ email })),
        folders: spec.folders ?? ['INBOX'],
        starred: spec.starred ?? false,
        unread: spec.unread ?? false,
        threadIndex: index,
        participantEmails: participants,
        participantDomains: [...new Set(participants.map((p) => p.split('@')[1]!))],
      })
      .returning();
    for (const tagId of spec.tagIds ?? [])
      await db().insert(emailTags).values({ emailId: email!.id, tagId, addedBy: 'user' });
    for (const tagId of spec.removedTagIds ?? [])
      await db()
        .insert(emailTags)
        .values({ emailId: email!.id, tagId, addedBy: 'user', removedAt: new Date(), removedBy: 'user' });
    ids.push(email!.id);
  }
  return { threadId: thread!.id, emailIds: ids };
}

export async function createProfile(
  caseId: string,
  platform: 'professional_network' | 'chat_platform',
  name: string,
  visibleToOpposingCounsel: boolean,
) {
  const [profile] = await db()
    .insert(materialProfiles)
    .values({ caseId, platform, externalId: name, name, visibleToOpposingCounsel })
    .returning();
  return profile!;
}

/** `sha256sum <file>`: the hash a court expert would compute. */
export const sha256sum = (file: string) => execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0]!;

/** Writes `bytes` as `name` in `directory` and hashes the file with sha256sum. */
export function sha256sumOf(directory: string, name: string, bytes: Uint8Array | string): string {
  const path = join(directory, name);
  writeFileSync(path, bytes);
  return sha256sum(path);
}

/** The device part of a device-note import as the desktop extractor sends it (everything but `notes`). */
export const extractorDevice = (deviceId: string) => ({
  deviceId,
  deviceType: 'ios',
  deviceMetadata: {},
  systemId: 'sys',
  appVersion: '1.0.0',
  osDetails: {
    arch: 'arm64',
    platform: 'darwin',
    version: '14',
    osType: 'Darwin',
    machine: 'mac',
    totalMemory: 8,
    cpus: {},
    extraInformation: {},
  },
});

/**
 * What the rows of the messages of `mbox` count in a case's storage (issue 29: stored text plus
 * the per-item overhead), learned by importing them into a case of their own.
 */
export async function rowBytesOfMbox(mbox: string): Promise<number> {
  const probe = await caseWithOwner();
  await importEmailStream({
    target: {
      caseId: probe.caseId,
      organizationId: probe.organizationId,
      importSource: 'probe.mbox',
      importedById: probe.owner.id,
    },
    open: async (start) => Readable.from([Buffer.from(mbox).subarray(start)]),
    from: FILE_START,
  });
  const [row] = await db().select({ bytes: cases.rowBytes }).from(cases).where(eq(cases.id, probe.caseId));
  return row!.bytes;
}

/** POST /extraction/case/import-notes into the case as its owner, from one desktop device: `notes` as sent. */
export function importNotesOf(s: { owner: TestUser; organizationId: string; caseId: string }, notes: unknown[]) {
  return invoke(routes.importCaseNotes, {
    token: s.owner.accessToken,
    organization: s.organizationId,
    query: { caseId: s.caseId },
    body: {
      deviceId: 'device-1',
      deviceType: 'ios',
      systemId: 'sys-1',
      appVersion: '3.2.0',
      osDetails: { cpus: {}, extraInformation: {} },
      notes,
    },
  });
}
