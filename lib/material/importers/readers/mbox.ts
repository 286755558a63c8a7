import libmime from 'libmime';

const LF = 0x0a;
const CR = 0x0d;
/** What starts an mbox: its first message's `From ` separator line. */
export const FROM_ = Buffer.from('From ', 'latin1');
/** A separator inside the file: a line that starts with `From `. */
const SEPARATOR = Buffer.from('\nFrom ', 'latin1');
const QUOTED_FROM = Buffer.from('>From ', 'latin1');

/** One message of an mbox, read in one pass: where it is, its bytes as the file holds them, and as a parser reads them. */
export interface MboxMessage {
  /** Byte offset in the file of the message's `From ` separator line: where a resumed read starts. */
  offset: number;
  /** Byte offset of what follows it: the next message's separator line, or the end of the file. */
  end: number;
  /**
   * The message as it appears in the file, its evidence hash: everything after the `From `
   * separator line up to the next one (or the end of the file), less the one empty line mbox
   * writes after each message when it is there. The separator line is not part of the message, and
   * `>From ` lines are NOT unquoted (that is mbox's escaping, but undoing it is a guess between
   * mboxo and mboxrd): what is hashed is exactly what the file holds. A message written into an
   * mbox as `From …\n<message>\n` hashes as the .eml file `<message>` did.
   */
  raw: Buffer;
  /**
   * What the mail parser reads, exactly as the mbox-reader package (which the importer used before)
   * gave it, so messages parse as they always did: lines split at LF or CRLF and joined with LF,
   * one `>` taken off `>From ` lines (`>>From ` becomes `>From `), the last empty line dropped.
   */
  content: Buffer;
  /** IMAP flags from the Status and X-Status headers (`\Seen`, `\Answered`, `\Flagged`, `\Draft`, `\Deleted`). */
  flags: string[];
  /** Gmail labels (X-Gmail-Labels), RFC 2047 words decoded. */
  labels: string[];
}

/** A message longer than a reader holds in memory: the file is refused rather than the process. */
export class MboxMessageTooLargeError extends Error {
  constructor(
    readonly offset: number,
    readonly maxBytes: number,
  ) {
    super(`The message at byte ${offset} is larger than ${maxBytes} bytes`);
    this.name = 'MboxMessageTooLargeError';
  }
}

/** A header block longer than a reader holds before the message's first empty line: the file is refused. */
export class MboxHeaderTooLargeError extends Error {
  constructor(
    readonly offset: number,
    readonly maxBytes: number,
  ) {
    super(`The header block of the message at byte ${offset} is longer than ${maxBytes} bytes`);
    this.name = 'MboxHeaderTooLargeError';
  }
}

const BLANK_LINE = Buffer.from('\n\n', 'latin1');
const BLANK_CRLF_LINE = Buffer.from('\n\r\n', 'latin1');

/**
 * Watches a message's bytes as they stream for the empty line that ends its header block, so a
 * header that never ends is refused once it passes a limit rather than gathered. Starts after a
 * line end (the mbox separator line is part of what it is fed; an .eml starts at its first line).
 */
export class HeaderBlockWatch {
  /** The last bytes fed (at most two), which may begin an empty line the next bytes end. */
  private tail: Buffer = Buffer.from('\n', 'latin1');
  private fed = 0;
  ended = false;

  constructor(readonly maxBytes: number) {}

  /** Feeds the message's next bytes; false when its header block is longer than `maxBytes`, ended or not. */
  feed(bytes: Buffer): boolean {
    if (this.ended || bytes.length === 0) return true;
    // Where the empty line starts (its first LF ends the header's last line): across the join, or in the bytes.
    const joint = Buffer.concat([this.tail, bytes.subarray(0, 2)]);
    const inJoint = Math.min(...[joint.indexOf(BLANK_LINE), joint.indexOf(BLANK_CRLF_LINE)].filter((at) => at >= 0));
    const inBytes = Math.min(...[bytes.indexOf(BLANK_LINE), bytes.indexOf(BLANK_CRLF_LINE)].filter((at) => at >= 0));
    const end = Number.isFinite(inJoint) ? inJoint - this.tail.length : inBytes;
    this.ended = Number.isFinite(end);
    const length = this.fed + (this.ended ? Math.max(0, end) : bytes.length);
    this.fed += bytes.length;
    this.tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 2)));
    return length <= this.maxBytes;
  }
}

/**
 * The messages of an mbox read from `input`, which starts at byte `start` of the file, on a `From `
 * separator line (the file's start, or a message's `offset`). The file is read once, a chunk at a
 * time; a message's bytes are kept only until its end is seen, and a message over
 * `maxMessageBytes` throws MboxMessageTooLargeError, a header block (from the separator line to the
 * first empty line) over `maxHeaderBytes` MboxHeaderTooLargeError, as soon as the bytes read pass
 * the limit. Separators are the lines that start with `From ` (lines end at LF), as mbox-reader
 * found them.
 */
export async function* mboxMessages(
  input: AsyncIterable<Buffer>,
  start = 0,
  maxMessageBytes = Number.POSITIVE_INFINITY,
  maxHeaderBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<MboxMessage> {
  let parts: Buffer[] = [];
  let size = 0;
  let offset = start;
  let header = new HeaderBlockWatch(maxHeaderBytes);
  // The last bytes of the previous chunk, not yet given to a message: they may begin a separator this chunk ends.
  let carry: Buffer | null = null;
  const take = (bytes: Buffer) => {
    if (bytes.length === 0) return;
    parts.push(bytes);
    size += bytes.length;
    if (size > maxMessageBytes) throw new MboxMessageTooLargeError(offset, maxMessageBytes);
    if (!header.feed(bytes)) throw new MboxHeaderTooLargeError(offset, maxHeaderBytes);
  };
  const finish = (): MboxMessage => {
    const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    const message = messageOf(whole, offset);
    parts = [];
    offset += size;
    size = 0;
    header = new HeaderBlockWatch(maxHeaderBytes);
    return message;
  };
  for await (const incoming of input) {
    let chunk = incoming;
    // A chunk too short to end a separator that starts in the carry joins it (a few bytes copied).
    if (carry && chunk.length < SEPARATOR.length) {
      chunk = Buffer.concat([carry, chunk]);
      carry = null;
    }
    if (carry) {
      // A separator across the two chunks starts in the carry (one wholly in the chunk is found below).
      const joint = Buffer.concat([carry, chunk.subarray(0, SEPARATOR.length - 1)]);
      const found = joint.indexOf(SEPARATOR);
      if (found >= 0) {
        take(carry.subarray(0, found + 1));
        yield finish();
        take(carry.subarray(found + 1));
      } else take(carry);
    }
    let at = 0;
    for (let found = chunk.indexOf(SEPARATOR); found >= 0; found = chunk.indexOf(SEPARATOR, at)) {
      take(chunk.subarray(at, found + 1));
      yield finish();
      at = found + 1;
    }
    const keep = Math.max(at, chunk.length - (SEPARATOR.length - 1));
    take(chunk.subarray(at, keep));
    carry = chunk.subarray(keep);
  }
  if (carry) take(carry);
  if (size > 0) yield finish();
}

/** The message of `whole` (its separator line and what follows it), found at byte `offset` of the file. */
function messageOf(whole: Buffer, offset: number): MboxMessage {
  const separatorEnd = whole.indexOf(LF);
  const segment = separatorEnd < 0 ? whole.subarray(whole.length) : whole.subarray(separatorEnd + 1);
  const content = parserContent(segment);
  return { offset, end: offset + whole.length, raw: withoutMboxEmptyLine(segment), content, ...statusOf(content) };
}

/** The segment less the empty line that ends an mbox message: "\n\n" or "\r\n\r\n" (also "\n\r\n") at its end. */
function withoutMboxEmptyLine(bytes: Buffer): Buffer {
  if (bytes.length >= 2 && bytes[bytes.length - 1] === LF) {
    const emptyLine = bytes[bytes.length - 2] === LF ? 1 : bytes[bytes.length - 2] === CR ? 2 : 0;
    const before = bytes.length - 1 - emptyLine;
    if (emptyLine && before >= 0 && bytes[before] === LF) return bytes.subarray(0, bytes.length - emptyLine);
  }
  return bytes;
}

/** The segment as mbox-reader handed it to the parser (see MboxMessage.content); no copy when nothing changes. */
function parserContent(segment: Buffer): Buffer {
  let text = segment;
  if (segment.includes(CR) || segment.includes(QUOTED_FROM))
    text = Buffer.from(
      segment
        .toString('latin1')
        .replace(/\r\n/g, '\n')
        // Only at a line's start: a lone CR does not start a line, as mbox-reader split lines at LF and CRLF.
        .replace(/(^|\n)>(>*From )/g, '$1$2'),
      'latin1',
    );
  let length = text.length;
  if (length > 0 && text[length - 1] === LF) {
    // Lines are joined, not ended, with LF; then an empty last line is dropped.
    length -= 1;
    if (length === 0 || text[length - 1] === LF) length = Math.max(0, length - 1);
  }
  return text.subarray(0, length);
}

/** The header block of a parser's content: up to its first empty line (all of it when there is none). */
function headerText(content: Buffer): string {
  const blank = content[0] === LF ? 0 : content.indexOf('\n\n');
  return content.subarray(0, blank < 0 ? content.length : blank).toString('latin1');
}

/** Flags and labels from the headers, read as mbox-reader read them (unfolded, whitespace collapsed). */
function statusOf(content: Buffer): { flags: string[]; labels: string[] } {
  const headerLines: string[] = [];
  for (const line of headerText(content).split('\n')) {
    if (!line) break;
    if (/^\s/.test(line) && headerLines.length) headerLines[headerLines.length - 1] += line;
    else headerLines.push(line);
  }
  const statuses: string[] = [];
  const xStatuses: string[] = [];
  const labelRows: string[] = [];
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const key = (colon < 0 ? '' : line.slice(0, colon)).trim().toLowerCase();
    if (key !== 'status' && key !== 'x-status' && key !== 'x-gmail-labels') continue;
    const value = line
      .slice(colon + 1)
      .replace(/\s+/g, ' ')
      .trim();
    (key === 'status' ? statuses : key === 'x-status' ? xStatuses : labelRows).push(value);
  }
  const flags = new Set<string>();
  for (const row of [...statuses, ...xStatuses].map((value) => value.toLowerCase())) {
    if (row.includes('r')) flags.add('\\Seen');
    if (row.includes('a')) flags.add('\\Answered');
    if (row.includes('f')) flags.add('\\Flagged');
    if (row.includes('t')) flags.add('\\Draft');
    if (row.includes('d')) flags.add('\\Deleted');
  }
  const labels = new Set<string>();
  for (const row of labelRows) {
    let decoded = row;
    try {
      decoded = libmime.decodeWords(row);
    } catch {
      // An encoded word that does not decode: the label as written.
    }
    for (const label of decoded.split(/\s*,\s*/)) if (label.trim()) labels.add(label.trim());
  }
  return { flags: [...flags], labels: [...labels] };
}
