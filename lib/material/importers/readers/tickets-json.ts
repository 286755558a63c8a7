import { getManyValues, isMany, none } from 'stream-chain/core';
import { Assembler } from 'stream-json/core/assembler.js';
import { jsonParser } from 'stream-json/core/parser.js';
import * as z from 'zod/mini';
import type { supportTickets } from '../../../db/schema/material';
import { hashCanonical } from '../../evidence-hash';
import { type ImportFile, MalformedImportError, type ReadItem } from '../batch';
import { IMPORT_LIMITS, quoted, sizeText } from '../limits';

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

type Token = { name: string; value?: unknown };

/** The tokens that stream a string, key or number's text as it is read; its packed value follows them. */
const STREAMED = new Set([
  'startString',
  'stringChunk',
  'endString',
  'startKey',
  'keyChunk',
  'endKey',
  'startNumber',
  'numberChunk',
  'endNumber',
]);

/** A value read where the file keeps its tickets: the `index`th, under `key` when the file keys them by id. */
interface TicketValue {
  index: number;
  key: string | null;
  value: unknown;
  /** Its size in characters, about: what a batch holds in memory for it. */
  chars: number;
}

/**
 * Follows the file's JSON tokens (stream-json's tokenizer) and assembles the tickets where the
 * data package keeps them: the elements of a top-level array; the elements of the `tickets` array
 * of a top-level object, whose other entries are then the export's metadata (a count, a next page)
 * and are passed over; or else the values of a top-level object keyed by ticket id (values that
 * are not objects are metadata, passed over). Tickets before `firstKept` are passed over unassembled.
 *
 * The tokenizer streams each string, key and number in pieces before it packs the whole value:
 * their lengths are counted as they arrive, so a value over IMPORT_LIMITS.jsonValueChars, or a
 * ticket over IMPORT_LIMITS.jsonTicketChars, fails MALFORMED_FILE within one chunk of the file of
 * its limit, before it is assembled.
 */
class TicketTokens {
  private readonly tokenize = jsonParser({ streamValues: true, packValues: true });
  /** Characters of the string, key or number being read, and which of them it is. */
  private valueChars = 0;
  private valueKind = 'string';
  private shape: 'start' | 'array' | 'object' | 'list' | 'metadata' | 'end' = 'start';
  /** Nesting depth before the next token. */
  private depth = 0;
  private key: string | null = null;
  /** The ticket being read: its assembler (null when passed over) and the depth its value started at. */
  private reading: {
    assembler: Assembler | null;
    depth: number;
    index: number;
    key: string | null;
    /** Its characters so far: those of its strings, keys and numbers, and 1 for each other token. */
    chars: number;
  } | null = null;
  /** The depth a passed-over value started at. */
  private skipping: number | null = null;
  private count = 0;

  constructor(private readonly firstKept: number) {}

  /** Feeds decoded text (`none`: the end of the file); the tickets it completes. Throws the tokenizer's syntax errors. */
  feed(text: string | typeof none): TicketValue[] {
    // The tokenizer is flushed with `none` (stream-chain's protocol), which its call type leaves out.
    const out = this.tokenize(text as string);
    const tickets: TicketValue[] = [];
    if (out !== none && isMany(out)) for (const token of getManyValues(out) as Token[]) this.take(token, tickets);
    else if (out !== none) this.take(out as Token, tickets);
    return tickets;
  }

  /** The ticket being read, or the next one (a value between tickets is named by it), for an error. */
  private tooLarge(what: string): MalformedImportError {
    const index = this.reading?.index ?? this.count;
    const key = this.reading?.key ?? null;
    return new MalformedImportError(`${ticketName(index, key)}: ${what}`, index);
  }

  /** Counts a streamed piece of a value: throws once the value or the ticket is over its limit. */
  private measure(token: Token): void {
    if (token.name.startsWith('start')) {
      this.valueChars = 0;
      this.valueKind = token.name.slice('start'.length).toLowerCase();
    }
    const chars = token.name.endsWith('Chunk') ? (token.value as string).length : 0;
    this.valueChars += chars;
    if (this.valueChars > IMPORT_LIMITS.jsonValueChars)
      throw this.tooLarge(`a ${this.valueKind} longer than ${sizeText(IMPORT_LIMITS.jsonValueChars)}`);
    if (this.reading) {
      this.reading.chars += chars;
      if (this.reading.chars > IMPORT_LIMITS.jsonTicketChars)
        throw this.tooLarge(`the ticket is larger than ${sizeText(IMPORT_LIMITS.jsonTicketChars)}`);
    }
  }

  private take(token: Token, tickets: TicketValue[]): void {
    if (STREAMED.has(token.name)) {
      this.measure(token);
      return;
    }
    if (this.reading) this.reading.chars += 1;
    const opens = token.name === 'startObject' || token.name === 'startArray';
    const closes = token.name === 'endObject' || token.name === 'endArray';
    if (this.reading) {
      this.reading.assembler?.consume(token as never);
      this.depth += opens ? 1 : closes ? -1 : 0;
      if (this.depth === this.reading.depth) this.complete(tickets);
      return;
    }
    if (this.skipping !== null) {
      this.depth += opens ? 1 : closes ? -1 : 0;
      if (this.depth === this.skipping) this.skipping = null;
      return;
    }
    switch (this.shape) {
      case 'start':
        if (token.name === 'startArray') this.shape = 'array';
        else if (token.name === 'startObject') this.shape = 'object';
        else
          throw new MalformedImportError(
            'The file is not an array of tickets, an object with a "tickets" array, or an object of tickets by id',
            0,
          );
        this.depth = 1;
        return;
      case 'array':
      case 'list':
        if (closes) {
          this.depth -= 1;
          this.shape = this.shape === 'list' ? 'metadata' : 'end';
          return;
        }
        this.begin(token, opens, null, tickets);
        return;
      case 'object':
      case 'metadata':
        if (token.name === 'keyValue') {
          this.key = token.value as string;
          return;
        }
        if (closes) {
          this.depth -= 1;
          this.shape = 'end';
          return;
        }
        if (this.shape === 'object' && this.key === 'tickets' && token.name === 'startArray') {
          this.shape = 'list';
          this.depth += 1;
          return;
        }
        if (this.shape === 'object' && token.name === 'startObject') {
          this.begin(token, opens, this.key, tickets);
          return;
        }
        // Metadata: a value that is not a ticket, or anything after the tickets list.
        if (opens) {
          this.skipping = this.depth;
          this.depth += 1;
        }
        return;
      case 'end':
        // The tokenizer reads one JSON value: nothing comes after it.
        return;
    }
  }

  private begin(token: Token, opens: boolean, key: string | null, tickets: TicketValue[]): void {
    const index = this.count++;
    const assembler = index >= this.firstKept ? new Assembler() : null;
    assembler?.consume(token as never);
    this.reading = { assembler, depth: this.depth, index, key, chars: 1 };
    if (opens) this.depth += 1;
    // A scalar where a ticket belongs is complete at once (and not a ticket: it fails validation).
    else this.complete(tickets);
  }

  private complete(tickets: TicketValue[]): void {
    const { assembler, index, key, chars } = this.reading!;
    this.reading = null;
    if (assembler) tickets.push({ index, key, value: assembler.current, chars });
  }
}

/** One ticket, ready to write but for the import's target (case, profile, file, importer). */
export interface TicketRecord {
  weight: number;
  values: Omit<typeof supportTickets.$inferInsert, 'caseId' | 'profileId' | 'importSource' | 'importedById'>;
}

/** A ticket as an error names it: "Ticket 3", or "Ticket 3 (key "1042")" when the file keys tickets by id. */
const ticketName = (index: number, key: string | null) =>
  `Ticket ${index + 1}${key === null ? '' : ` (key "${quoted(key)}")`}`;

/** Validates one ticket as read; what its row holds, with its evidence hash over the ticket as the file has it. */
function ticketRecord({ index, key, value, chars }: TicketValue): TicketRecord {
  const name = ticketName(index, key);
  const parsed = Ticket.safeParse(value);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const at = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new MalformedImportError(`${name}: not a ticket${at}: ${issue?.message ?? 'invalid'}`, index);
  }
  const ticket = parsed.data;
  const ticketId = Number(ticket.ticket_id ?? ticket.id);
  if (!Number.isSafeInteger(ticketId)) throw new MalformedImportError(`${name}: no numeric id`, index);
  const createdAt = ticket.created_at ? new Date(ticket.created_at) : null;
  return {
    weight: chars,
    values: {
      ...hashCanonical(value),
      ticketId,
      subject: ticket.subject ?? null,
      status: ticket.status ?? null,
      ticketCreatedAt: createdAt && !Number.isNaN(createdAt.getTime()) ? createdAt : null,
      comments: (ticket.comments ?? []).map((c) => ({
        author: String(c.author ?? ''),
        comment: c.comment ?? c.body ?? '',
        createdAt: c.created_at ?? c.createdAt ?? '',
      })),
    },
  };
}

/** The file's text as it streams: UTF-8 decoded (a leading byte-order mark dropped), with the bytes read so far. */
async function* textOf(file: ImportFile): AsyncGenerator<{ text: string; bytes: number }> {
  const input = await file.open(0);
  const decoder = new TextDecoder();
  let bytes = 0;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      yield { text: decoder.decode(chunk, { stream: true }), bytes };
    }
    yield { text: decoder.decode(), bytes };
  } finally {
    input.destroy();
  }
}

/** A syntax error of the tokenizer, at `chunk` (the how-manyth piece of text fed). */
class JsonSyntaxError extends Error {
  constructor(
    readonly syntaxError: Error,
    readonly chunk: number,
  ) {
    super(syntaxError.message);
  }
}

/**
 * The tickets of the file from `from.itemIndex` on (those before it are read and passed over). A
 * ticket that is not one, or has no numeric id, is malformed; so is a file that is not JSON, named
 * by line and column (see beforeSyntaxError).
 */
export async function* readTickets(file: ImportFile): AsyncGenerator<ReadItem<TicketRecord>> {
  const tokens = new TicketTokens(file.from.itemIndex);
  let chunk = 0;
  let next = file.from.itemIndex;
  let read = 0;
  try {
    for await (const { text, bytes } of textOf(file)) {
      read = bytes;
      for (const ticket of feed(tokens, text, chunk)) {
        yield { item: ticketRecord(ticket), next: { byteOffset: bytes, itemIndex: ticket.index + 1 } };
        next = ticket.index + 1;
      }
      chunk += 1;
    }
    for (const ticket of feed(tokens, none, chunk)) {
      yield { item: ticketRecord(ticket), next: { byteOffset: read, itemIndex: ticket.index + 1 } };
      next = ticket.index + 1;
    }
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    yield* beforeSyntaxError(file, next, error);
  }
}

function feed(tokens: TicketTokens, text: string | typeof none, chunk: number): TicketValue[] {
  try {
    return tokens.feed(text);
  } catch (error) {
    if (error instanceof MalformedImportError) throw error;
    throw new JsonSyntaxError(error as Error, chunk);
  }
}

/**
 * After a syntax error: reads the file again up to the failing piece, then that piece one
 * character at a time, so the tickets completed before the error are yielded (from `next` on; the
 * ones before were already) and the error is named by its line and column. Then throws it.
 */
async function* beforeSyntaxError(
  file: ImportFile,
  next: number,
  failure: JsonSyntaxError,
): AsyncGenerator<ReadItem<TicketRecord>> {
  const tokens = new TicketTokens(next);
  let line = 1;
  let column = 1;
  const advance = (text: string) => {
    const lastBreak = text.lastIndexOf('\n');
    if (lastBreak < 0) column += text.length;
    else {
      line += text.split('\n').length - 1;
      column = text.length - lastBreak;
    }
  };
  let chunk = 0;
  let tickets = next;
  const failed = (cause: Error): MalformedImportError =>
    new MalformedImportError(
      `Ticket ${tickets + 1}: the file is not valid JSON at line ${line}, column ${column}: ${cause.message}`,
      tickets,
    );
  for await (const { text, bytes } of textOf(file)) {
    if (chunk < failure.chunk) {
      for (const ticket of tokens.feed(text))
        if (ticket.index >= next) {
          yield { item: ticketRecord(ticket), next: { byteOffset: bytes, itemIndex: ticket.index + 1 } };
          tickets = ticket.index + 1;
        }
      advance(text);
      chunk += 1;
      continue;
    }
    for (const character of text) {
      let completed: TicketValue[];
      try {
        completed = tokens.feed(character);
      } catch (error) {
        throw failed(error as Error);
      }
      for (const ticket of completed) {
        yield { item: ticketRecord(ticket), next: { byteOffset: bytes, itemIndex: ticket.index + 1 } };
        tickets = ticket.index + 1;
      }
      advance(character);
    }
    break;
  }
  try {
    tokens.feed(none);
  } catch (error) {
    throw failed(error as Error);
  }
  throw failed(failure.syntaxError);
}
