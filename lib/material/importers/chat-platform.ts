import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { eq } from 'drizzle-orm';
import * as z from 'zod/mini';
import { recordAudit } from '../../audit';
import { cases, supportTickets } from '../../db/schema';
import { transaction } from '../../db/transaction';
import { ImportCaseNotFoundError } from '../errors';
import { hashCanonical, importingUserId } from '../evidence-hash';
import type { ImportSummary } from './email';
import { ensureProfile } from './profiles';

const Comment = z.object({
  author: z.optional(z.union([z.string(), z.number()])),
  comment: z.optional(z.string()),
  body: z.optional(z.string()),
  created_at: z.optional(z.string()),
  createdAt: z.optional(z.string()),
});

const Ticket = z.object({
  id: z.optional(z.union([z.number(), z.string()])),
  ticket_id: z.optional(z.union([z.number(), z.string()])),
  subject: z.optional(z.nullable(z.string())),
  status: z.optional(z.nullable(z.string())),
  created_at: z.optional(z.nullable(z.string())),
  comments: z.optional(z.array(Comment)),
});

/** The data package keeps tickets as an array, an object keyed by ticket id, or under `tickets`. */
const TicketFile = z.union([z.array(Ticket), z.object({ tickets: z.array(Ticket) }), z.record(z.string(), Ticket)]);

/** The file's tickets as it holds them, every field kept: what each ticket's evidence hash is over. */
function sourceTickets(json: unknown): unknown[] {
  if (Array.isArray(json)) return json;
  const file = json as Record<string, unknown>;
  return Array.isArray(file.tickets) ? file.tickets : Object.values(file);
}

/**
 * Imports the chat platform's data-package support-ticket JSON into a profile's tickets with their
 * comments. A ticket already imported (same ticket id for the profile) is skipped.
 *
 * Each ticket's evidence hash is over the RFC 8785 canonical JSON of the ticket object as the file
 * has it (as JSON.parse reads it, fields the import ignores included). The import records one
 * `evidence.support_tickets.imported` event when it adds any ticket.
 */
export async function importSupportTicketsJson(
  caseId: string,
  file: string,
  profileName: string,
): Promise<ImportSummary> {
  const json: unknown = JSON.parse(await readFile(file, 'utf8'));
  const parsed = TicketFile.parse(json);
  const source = sourceTickets(json);
  const tickets = Array.isArray(parsed)
    ? parsed
    : Array.isArray((parsed as { tickets?: unknown }).tickets)
      ? (parsed as { tickets: z.infer<typeof Ticket>[] }).tickets
      : Object.values(parsed as Record<string, z.infer<typeof Ticket>>);
  const values = tickets.map((ticket, index) => {
    const ticketId = Number(ticket.ticket_id ?? ticket.id);
    if (!Number.isSafeInteger(ticketId)) throw new Error(`Ticket ${index + 1} has no numeric id`);
    const createdAt = ticket.created_at ? new Date(ticket.created_at) : null;
    return {
      ...hashCanonical(source[index]),
      ticketId,
      subject: ticket.subject ?? null,
      status: ticket.status ?? null,
      ticketCreatedAt: createdAt && !Number.isNaN(createdAt.getTime()) ? createdAt : null,
      comments: (ticket.comments ?? []).map((c) => ({
        author: String(c.author ?? ''),
        comment: c.comment ?? c.body ?? '',
        createdAt: c.created_at ?? c.createdAt ?? '',
      })),
    };
  });
  const importSource = basename(file);
  const importedById = importingUserId();
  return transaction(async (tx) => {
    const [target] = await tx.select({ organizationId: cases.organizationId }).from(cases).where(eq(cases.id, caseId));
    if (!target) throw new ImportCaseNotFoundError(caseId);
    const profileId = await ensureProfile(tx, caseId, 'chat_platform', profileName);
    const inserted = values.length
      ? await tx
          .insert(supportTickets)
          .values(values.map((v) => ({ ...v, caseId, profileId, importSource, importedById })))
          .onConflictDoNothing()
          .returning({ id: supportTickets.id })
      : [];
    const summary = { read: values.length, imported: inserted.length, skipped: values.length - inserted.length };
    if (summary.imported > 0)
      recordAudit(tx, {
        action: 'evidence.support_tickets.imported',
        organizationId: target.organizationId,
        caseId,
        target: { type: 'profile', id: profileId },
        metadata: { file: importSource, profile: profileName, ...summary },
      });
    return summary;
  });
}
