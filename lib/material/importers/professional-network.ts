import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { parse } from 'csv-parse/sync';
import { recordAudit } from '../../audit';
import { cases, networkConversations, networkMessages } from '../../db/schema';
import { transaction } from '../../db/transaction';
import { ImportCaseNotFoundError } from '../errors';
import { hashCanonical, importingUserId } from '../evidence-hash';
import type { ImportSummary } from './email';
import { ensureProfile } from './profiles';

const REQUIRED = ['CONVERSATION ID', 'FROM', 'DATE', 'CONTENT'] as const;

/**
 * Imports the professional network's data-export messages.csv (CONVERSATION ID, CONVERSATION
 * TITLE, FROM, TO, DATE, SUBJECT, CONTENT, FOLDER, ATTACHMENTS, ...) into conversations and
 * messages of one profile of the case. Each message is keyed by a hash of its fields, so
 * importing the same export again adds nothing.
 *
 * Each message's evidence hash is over the RFC 8785 canonical JSON of its row as the file has it:
 * an object from each header, as written (only a byte-order mark removed), to the row's value
 * (columns past the header's are dropped, as for the import). The import records one
 * `evidence.network_messages.imported` event when it adds any message.
 */
export async function importNetworkMessagesCsv(
  caseId: string,
  file: string,
  profileName: string,
): Promise<ImportSummary> {
  const sourceRows: Array<Record<string, string>> = parse(await readFile(file), {
    columns: true,
    skip_empty_lines: true,
    relax_column_count: true,
    bom: true,
  });
  // What the import reads: the same rows under trimmed, upper-case column names.
  const rows = sourceRows.map((row) =>
    Object.fromEntries(Object.entries(row).map(([column, value]) => [column.trim().toUpperCase(), value])),
  );
  const missing = REQUIRED.filter((column) => rows.length > 0 && !(column in rows[0]!));
  if (missing.length) throw new Error(`messages.csv lacks the columns ${missing.join(', ')}`);

  const importSource = basename(file);
  const importedById = importingUserId();
  return transaction(async (tx) => {
    const [target] = await tx.select({ organizationId: cases.organizationId }).from(cases).where(eq(cases.id, caseId));
    if (!target) throw new ImportCaseNotFoundError(caseId);
    const profileId = await ensureProfile(tx, caseId, 'professional_network', profileName);
    const byConversation = new Map<string, Array<Record<string, string>>>();
    for (const row of rows)
      byConversation.set(row['CONVERSATION ID']!, [...(byConversation.get(row['CONVERSATION ID']!) ?? []), row]);

    const conversationIds = [...byConversation.keys()];
    if (conversationIds.length) {
      await tx
        .insert(networkConversations)
        .values(
          conversationIds.map((externalId) => {
            const messages = byConversation.get(externalId)!;
            const participants = [
              ...new Set(
                messages
                  .flatMap((m) => [m.FROM, ...(m.TO ?? '').split(',')])
                  .map((p) => p?.trim())
                  .filter((p): p is string => Boolean(p)),
              ),
            ];
            return {
              caseId,
              profileId,
              externalId,
              title: messages.find((m) => m['CONVERSATION TITLE'])?.['CONVERSATION TITLE'] ?? null,
              participants,
            };
          }),
        )
        .onConflictDoUpdate({
          target: [networkConversations.profileId, networkConversations.externalId],
          set: {
            participants: sql`array(select distinct unnest(${networkConversations.participants} || excluded.participants))`,
          },
        });
    }
    const conversations = conversationIds.length
      ? await tx
          .select({ id: networkConversations.id, externalId: networkConversations.externalId })
          .from(networkConversations)
          .where(
            and(
              eq(networkConversations.profileId, profileId),
              inArray(networkConversations.externalId, conversationIds),
            ),
          )
      : [];
    const idOf = new Map(conversations.map((c) => [c.externalId, c.id]));

    const values = rows.map((row, index) => ({
      ...hashCanonical(sourceRows[index]),
      importSource,
      importedById,
      caseId,
      profileId,
      conversationId: idOf.get(row['CONVERSATION ID']!)!,
      externalId: createHash('sha256')
        .update(JSON.stringify([row['CONVERSATION ID'], row.FROM, row.DATE, row.SUBJECT ?? '', row.CONTENT]))
        .digest('hex'),
      from: row.FROM ?? '',
      to: row.TO ?? '',
      date: new Date(row.DATE!.replace(' UTC', 'Z').replace(' ', 'T')),
      subject: row.SUBJECT || null,
      content: row.CONTENT ?? '',
      folder: row.FOLDER || null,
      isDraft: /^(true|yes|1)$/i.test(row['IS MESSAGE DRAFT'] ?? ''),
      attachments: row.ATTACHMENTS ?? '',
    }));
    const bad = values.findIndex((v) => Number.isNaN(v.date.getTime()));
    if (bad >= 0) throw new Error(`Row ${bad + 2}: DATE "${rows[bad]!.DATE}" is not a date`);
    let imported = 0;
    for (let start = 0; start < values.length; start += 1000) {
      const inserted = await tx
        .insert(networkMessages)
        .values(values.slice(start, start + 1000))
        .onConflictDoNothing()
        .returning({ id: networkMessages.id });
      imported += inserted.length;
    }
    if (imported > 0)
      recordAudit(tx, {
        action: 'evidence.network_messages.imported',
        organizationId: target.organizationId,
        caseId,
        target: { type: 'profile', id: profileId },
        metadata: {
          file: importSource,
          profile: profileName,
          read: rows.length,
          imported,
          skipped: rows.length - imported,
        },
      });
    return { read: rows.length, imported, skipped: rows.length - imported };
  });
}
