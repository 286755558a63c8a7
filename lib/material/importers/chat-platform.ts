import { readFile } from 'node:fs/promises';
import * as z from 'zod/mini';
import { supportTickets } from '../../db/schema';
import { transaction } from '../../db/transaction';
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

/**
 * Imports the chat platform's data-package support-ticket JSON into a profile's tickets with their
 * comments. A ticket already imported (same ticket id for the profile) is skipped.
 */
export async function importSupportTicketsJson(
  caseId: string,
  file: string,
  profileName: string,
): Promise<ImportSummary> {
  const parsed = TicketFile.parse(JSON.parse(await readFile(file, 'utf8')));
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
  return transaction(async (tx) => {
    const profileId = await ensureProfile(tx, caseId, 'chat_platform', profileName);
    const inserted = values.length
      ? await tx
          .insert(supportTickets)
          .values(values.map((v) => ({ ...v, caseId, profileId })))
          .onConflictDoNothing()
          .returning({ id: supportTickets.id })
      : [];
    return { read: values.length, imported: inserted.length, skipped: values.length - inserted.length };
  });
}
