import type { Readable } from 'node:stream';
import { type AddressObject, simpleParser } from 'mailparser';
import type { emails } from '../../../db/schema/material';
import { hashBytes } from '../../evidence-hash';
import { keySafe } from '../../uploads';
import { type ImportFile, MalformedImportError, type ReadItem } from '../batch';
import { assertStorableKey, IMPORT_LIMITS, sizeText } from '../limits';
import { FROM_, HeaderBlockWatch, MboxHeaderTooLargeError, MboxMessageTooLargeError, mboxMessages } from './mbox';

/** The largest message read (a whole .eml, or one message of an mbox): larger ones are refused as malformed. */
export const MAX_MESSAGE_BYTES = IMPORT_LIMITS.emailMessageBytes;
/** The longest header block of a message (up to its first empty line): longer ones are refused as malformed. */
const MAX_HEADER_BYTES = IMPORT_LIMITS.emailHeaderBytes;
/** An email's id as its attachments' keys hold it (a UUID, drawn at commit): its length is what the key check needs. */
const EMAIL_ID_STAND_IN = '00000000-0000-0000-0000-000000000000';

/**
 * Where the import stores an email's attachment (`keyName` as ParsedAttachment gives it): the
 * reader checks each key before anything of the message is stored.
 */
export type AttachmentKey = (emailId: string, keyName: string) => string;

type Address = { name?: string; email?: string };

function addresses(value: AddressObject | AddressObject[] | undefined): Address[] {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list
    .flatMap((group) => group.value)
    .map((a) => ({ ...(a.name ? { name: a.name } : {}), ...(a.address ? { email: a.address.toLowerCase() } : {}) }));
}

/** A header field's first line: a field name (printable ASCII but the colon), then the colon (RFC 5322). */
const HEADER_FIELD = /^[\x21-\x39\x3b-\x7e]+[ \t]*:/;

export interface ParsedAttachment {
  name: string;
  /** The file name as the object key carries it. */
  keyName: string;
  contentType: string;
  content: Buffer;
  size: number;
  sha256: string;
  sizeBytes: number;
}

/** One message parsed, with everything its rows need but what the import's target gives. */
export interface ParsedEmail {
  messageId: string;
  /** The thread's key: the first Message-ID of References, else In-Reply-To, else the message's own. */
  rootId: string;
  firstTo: string | undefined;
  participants: string[];
  fields: Omit<
    typeof emails.$inferInsert,
    'id' | 'caseId' | 'threadId' | 'grantId' | 'sourceEmail' | 'importSource' | 'importedById'
  >;
  attachments: ParsedAttachment[];
  attachmentBytes: number;
  /** The raw message's size: what the batch holds in memory for it, about. */
  weight: number;
}

/**
 * A copy in memory of its own: the parser's buffer is a slice of a shared pool (64 KiB or more),
 * which a batch holding hundreds of small attachments would otherwise keep alive, one pool each.
 */
function ownCopy(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * Parses one message; `name` says which it is in the file ("Message 3 (byte 1234)"). Its
 * attachments' object keys carry their names bounded (keySafe); a key the store would still refuse
 * fails the message MALFORMED_FILE here, before anything of it is stored.
 */
async function parseEmail(
  attachmentKey: AttachmentKey,
  raw: Buffer,
  content: Buffer,
  mbox: { flags: string[]; labels: string[] },
  name: string,
  itemIndex: number,
): Promise<ParsedEmail> {
  if (!HEADER_FIELD.test(content.subarray(0, 1000).toString('latin1')))
    throw new MalformedImportError(`${name} does not start with a header field: not an RFC 5322 message`, itemIndex);
  const message = hashBytes(raw);
  // textAsHtml is not kept: skipping it halves the parse time (measured), every field kept is the same.
  const parsed = await simpleParser(content, { skipTextToHtml: true }).catch((error: unknown) => {
    throw new MalformedImportError(`${name} cannot be parsed: ${(error as Error).message}`, itemIndex);
  });
  // A message without a Message-ID is keyed by its hash, so importing it again adds nothing.
  const messageId = (parsed.messageId ?? `<generated-${message.sha256}@import>`).trim();
  const references = (
    Array.isArray(parsed.references) ? parsed.references : parsed.references ? [parsed.references] : []
  ).map((r) => r.trim());
  const from = addresses(parsed.from);
  const to = addresses(parsed.to);
  const cc = addresses(parsed.cc);
  const bcc = addresses(parsed.bcc);
  const participants = [
    ...new Set([...from, ...to, ...cc, ...bcc].map((a) => a.email).filter((e): e is string => Boolean(e))),
  ];
  const text = parsed.text ?? '';
  const found = parsed.attachments.map((file, index): ParsedAttachment => {
    // The decoded bytes, exactly what is stored: the download check hashes the object again.
    const { sha256, sizeBytes } = hashBytes(file.content);
    const keyName = `${index}-${keySafe(file.filename ?? 'attachment')}`;
    assertStorableKey(attachmentKey(EMAIL_ID_STAND_IN, keyName), `${name}, attachment ${index + 1}`, itemIndex);
    return {
      name: file.filename ?? `attachment-${index + 1}`,
      keyName,
      contentType: file.contentType,
      content: ownCopy(file.content),
      size: file.size,
      sha256,
      sizeBytes,
    };
  });
  return {
    messageId,
    rootId: references[0] ?? parsed.inReplyTo?.trim() ?? messageId,
    firstTo: to[0]?.email,
    participants,
    fields: {
      externalId: messageId,
      subject: parsed.subject ?? null,
      body: typeof parsed.html === 'string' ? parsed.html : text || null,
      snippet: text ? text.replace(/\s+/g, ' ').trim().slice(0, 200) : null,
      object: 'message',
      date: parsed.date ?? null,
      from,
      to,
      cc,
      bcc,
      replyTo: addresses(parsed.replyTo),
      folders: mbox.labels,
      starred: mbox.flags.includes('\\Flagged'),
      unread: mbox.flags.length > 0 && !mbox.flags.includes('\\Seen'),
      threadIndex: references.length,
      participantEmails: participants,
      participantDomains: [...new Set(participants.map((e) => e.split('@')[1]!).filter(Boolean))],
      inReplyTo: parsed.inReplyTo ?? null,
      sha256: message.sha256,
      sizeBytes: message.sizeBytes,
    },
    attachments: found,
    attachmentBytes: found.reduce((sum, attachment) => sum + attachment.size, 0),
    weight: raw.length,
  };
}

/** The first `bytes` bytes of `input` and all of it again, so a reader can look before it reads. */
async function peek(input: Readable, bytes: number): Promise<{ head: Buffer; chunks: AsyncGenerator<Buffer> }> {
  const iterator = (input as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const first: Buffer[] = [];
  let length = 0;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) break;
    first.push(next.value);
    length += next.value.length;
  }
  async function* chunks() {
    // Given once, then let go: the generator lives as long as the import.
    yield* first.splice(0);
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head: Buffer.concat(first).subarray(0, bytes), chunks: chunks() };
}

/**
 * The messages of the file from `from`, parsed: an mbox ("From " separated, split as it streams,
 * resumed at a message's separator line), or one .eml message (a file that does not start with
 * "From ", read whole up to MAX_MESSAGE_BYTES).
 */
export async function* readEmails(
  file: ImportFile,
  attachmentKey: AttachmentKey,
): AsyncGenerator<ReadItem<ParsedEmail>> {
  const { byteOffset, itemIndex } = file.from;
  const input = await file.open(byteOffset);
  try {
    const { head, chunks } = await peek(input, FROM_.length);
    // An empty file, or a resume at the end of one.
    if (head.length === 0) return;
    if (head.equals(FROM_)) {
      let index = itemIndex;
      try {
        for await (const message of mboxMessages(chunks, byteOffset, MAX_MESSAGE_BYTES, MAX_HEADER_BYTES)) {
          const item = await parseEmail(
            attachmentKey,
            message.raw,
            message.content,
            message,
            `Message ${index + 1} (byte ${message.offset})`,
            index,
          );
          yield { item, next: { byteOffset: message.end, itemIndex: index + 1 } };
          index += 1;
        }
      } catch (error) {
        if (error instanceof MboxMessageTooLargeError)
          throw new MalformedImportError(
            `Message ${index + 1} (byte ${error.offset}) is larger than ${sizeText(MAX_MESSAGE_BYTES)}`,
            index,
          );
        if (error instanceof MboxHeaderTooLargeError)
          throw new MalformedImportError(
            `Message ${index + 1} (byte ${error.offset}): its header block is longer than ${sizeText(MAX_HEADER_BYTES)} (no empty line ends it)`,
            index,
          );
        throw error;
      }
      return;
    }
    if (byteOffset > 0)
      throw new Error(`The import's checkpoint (byte ${byteOffset}) is not at the start of a message`);
    const parts: Buffer[] = [];
    let size = 0;
    const header = new HeaderBlockWatch(MAX_HEADER_BYTES);
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > MAX_MESSAGE_BYTES)
        throw new MalformedImportError(`Message 1 is larger than ${sizeText(MAX_MESSAGE_BYTES)}`, itemIndex);
      if (!header.feed(chunk))
        throw new MalformedImportError(
          `Message 1: its header block is longer than ${sizeText(MAX_HEADER_BYTES)} (no empty line ends it)`,
          itemIndex,
        );
      parts.push(chunk);
    }
    const content = Buffer.concat(parts, size);
    const item = await parseEmail(attachmentKey, content, content, { flags: [], labels: [] }, 'Message 1', itemIndex);
    yield { item, next: { byteOffset: size, itemIndex: itemIndex + 1 } };
  } finally {
    input.destroy();
  }
}
