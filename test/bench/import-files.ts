import { createCipheriv, createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * Export files for the import benchmark (imports.ts), written as a stream to disk: a file is never
 * held in memory whole, whatever its size. Both are deterministic: the same seed and sizes give
 * the same bytes, so runs import the same files.
 */

/** Mulberry32: a small seeded generator of [0, 1) floats, enough to vary names, sizes and text. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Attachment bytes: an AES-256-CTR keystream keyed by the seed. Deterministic, incompressible like
 * the PDFs and images real mail carries, and produced by OpenSSL far faster than a JS generator.
 */
function attachmentBytes(seed: number): (size: number) => Buffer {
  const key = createHash('sha256').update(`cebs-bench-attachments:${seed}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return (size) => cipher.update(Buffer.alloc(size));
}

/** Writes to `out`, waiting when its buffer is full, so memory stays at one chunk whatever the file's size. */
async function write(out: WriteStream, chunk: string | Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

async function close(out: WriteStream): Promise<number> {
  out.end();
  await once(out, 'finish');
  return out.bytesWritten;
}

const FIRST_NAMES = ['Ann', 'Bob', 'Chloé', 'Dmitri', 'Eva', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Zoë', 'Lena'];
const LAST_NAMES = ['Lee', 'Marsh', 'Müller', 'Okafor', 'Novak', 'Santos', 'Tanaka', 'Dubois', 'Khan', 'Reyes'];
const DOMAINS = ['lee-partners.example', 'marsh.example', 'acme-corp.example', 'court.example', 'mail.example'];
// No "from": a body line starting with "From " would split the mbox.
const WORDS = (
  'the contract settlement invoice deposition meeting witness evidence schedule draft exhibit ' +
  'agreement payment clause review counsel hearing motion discovery claim damages notice ' +
  'please attached see below regarding our client their position we will need by friday ' +
  'monday call confirm copy signed version amended terms parties court filing deadline'
).split(' ');
const TOPICS = ['Settlement draft', 'Deposition schedule', 'Invoice', 'Exhibit list', 'Discovery requests', 'Hearing'];
const ATTACHMENT_TYPES = [
  ['application/pdf', 'pdf'],
  ['image/jpeg', 'jpg'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
  ['text/csv', 'csv'],
] as const;

interface Person {
  name: string;
  email: string;
}

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function person(random: () => number): Person {
  const first = pick(random, FIRST_NAMES);
  const last = pick(random, LAST_NAMES);
  const local = `${first}.${last}`
    .normalize('NFD')
    .replace(/[^\w.]/g, '')
    .toLowerCase();
  return { name: `${first} ${last}`, email: `${local}@${pick(random, DOMAINS)}` };
}

/** Sentences of `lines` lines wrapped under 72 characters, as mail clients write them. */
function paragraph(random: () => number, lines: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines; i += 1) {
    const words: string[] = [];
    let length = 0;
    while (length < 50 + random() * 20) {
      const word = pick(random, WORDS);
      words.push(word);
      length += word.length + 1;
    }
    const line = words.join(' ');
    out.push(`${line[0]!.toUpperCase()}${line.slice(1)}${random() < 0.3 ? '.' : ''}`);
  }
  return out;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');
const clock = (d: Date) => `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
/** The asctime form of the mbox separator line: `Mon Nov  2 10:00:00 2026`. */
const asctime = (d: Date) =>
  `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${clock(d)} ${d.getUTCFullYear()}`;
/** RFC 5322 Date: `Mon, 02 Nov 2026 10:00:00 +0000`. */
const rfc5322 = (d: Date) =>
  `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${clock(d)} +0000`;
const address = (p: Person) => `${/[^\x20-\x7e]/.test(p.name) ? `"${p.name}"` : p.name} <${p.email}>`;

/** Base64 in 76-character lines, as MIME writes it. */
function base64Lines(bytes: Buffer): string {
  const encoded = bytes.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < encoded.length; i += 76) lines.push(encoded.slice(i, i + 76));
  return lines.join('\n');
}

export interface MboxSpec {
  /** Messages to write. */
  messages: number;
  /** The file size to aim at: attachment sizes are steered so the file ends near it. */
  targetBytes: number;
  seed?: number;
}

export interface GeneratedFile {
  path: string;
  bytes: number;
  /** Messages (mbox) or rows (CSV) written. */
  items: number;
  /** Mbox: messages with at least one attachment, attachments in all, and replies (In-Reply-To). */
  withAttachments?: number;
  attachments?: number;
  replies?: number;
}

/** A thread still open for replies: its root and the last message ids (References, capped). */
interface OpenThread {
  subject: string;
  references: string[];
  participants: Person[];
}

/**
 * Writes an mbox of `messages` RFC 5322 messages: headers (Message-ID, Date, From, To, some Cc,
 * Subject, Gmail labels, Status), a UTF-8 text body (replies quote the previous message), and for
 * most a base64 attachment (PDF, JPEG, DOCX or CSV; some carry two). About a third are replies with
 * In-Reply-To and References into one of the last 2,000 threads. Each attachment's size is drawn
 * around what is left of `targetBytes` over the messages left to write, so the file ends near it.
 */
export async function writeMbox(path: string, spec: MboxSpec): Promise<GeneratedFile> {
  const random = seededRandom(spec.seed ?? 17);
  const bytesOf = attachmentBytes(spec.seed ?? 17);
  const out = createWriteStream(path);
  const threads: OpenThread[] = [];
  let date = Date.UTC(2024, 0, 2, 8, 0, 0);
  let written = 0;
  let withAttachments = 0;
  let attachments = 0;
  let replies = 0;
  for (let n = 0; n < spec.messages; n += 1) {
    date += Math.floor(30_000 + random() * 600_000);
    const sent = new Date(date);
    const messageId = `<${sent.getTime().toString(36)}.${n}.bench@${pick(random, DOMAINS)}>`;
    const thread = threads.length > 0 && random() < 0.35 ? pick(random, threads) : undefined;
    const from = thread ? pick(random, thread.participants) : person(random);
    const to = thread ? thread.participants.filter((p) => p !== from).slice(0, 2) : [person(random)];
    if (to.length === 0) to.push(person(random));
    const cc = random() < 0.3 ? [person(random)] : [];
    const subject = thread ? `Re: ${thread.subject}` : `${pick(random, TOPICS)} ${n}`;
    const labels = random() < 0.5 ? 'Inbox' : random() < 0.5 ? 'Sent' : 'Inbox,Important';
    const headers = [
      `From ${from.email} ${asctime(sent)}`,
      `Return-Path: <${from.email}>`,
      `Message-ID: ${messageId}`,
      `Date: ${rfc5322(sent)}`,
      `From: ${address(from)}`,
      `To: ${to.map(address).join(', ')}`,
      ...(cc.length ? [`Cc: ${cc.map(address).join(', ')}`] : []),
      `Subject: ${subject}`,
      ...(thread ? [`In-Reply-To: ${thread.references.at(-1)}`, `References: ${thread.references.join('\n ')}`] : []),
      `X-Gmail-Labels: ${labels}`,
      `Status: ${random() < 0.8 ? 'RO' : 'O'}`,
      'MIME-Version: 1.0',
    ];
    const body = [
      `Dear ${to[0]!.name.split(' ')[0]},`,
      '',
      ...paragraph(random, 3 + Math.floor(random() * 20)),
      '',
      'Best regards,',
      from.name,
      ...(thread
        ? [
            '',
            `On ${rfc5322(new Date(date - 3_600_000))}, ${address(to[0]!)} wrote:`,
            ...paragraph(random, 4).map((l) => `> ${l}`),
          ]
        : []),
    ].join('\n');
    if (thread) {
      replies += 1;
      // References grow with the thread; real clients trim them too, keeping the root.
      thread.references = [thread.references[0]!, ...thread.references.slice(1).slice(-8), messageId];
      thread.participants = [...new Set([...thread.participants, ...cc])].slice(0, 6);
    } else {
      threads.push({ subject, references: [messageId], participants: [from, ...to, ...cc] });
      if (threads.length > 2_000) threads.shift();
    }

    const count = random() < 0.1 ? 0 : random() < 0.06 ? 2 : 1;
    let message: string;
    if (count === 0) {
      message = `${[...headers, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit'].join('\n')}\n\n${body}\n\n`;
    } else {
      const boundary = `----=_Part_${n}_${Math.floor(random() * 1e9)}`;
      // What is left to reach the target, over the messages left, less this message's text (base64 is 4/3 plus newlines).
      const left = spec.targetBytes - written - headers.join('\n').length - body.length - 400 * count;
      const share = Math.max(256, (left / (spec.messages - n) - 1200) * (3 / 4) * (76 / 77));
      const parts = [
        `--${boundary}\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n${body}\n`,
      ];
      for (let a = 0; a < count; a += 1) {
        const [type, extension] = pick(random, ATTACHMENT_TYPES);
        const size = Math.max(64, Math.round((share / count) * (0.5 + random())));
        const name = `exhibit-${n}-${a + 1}.${extension}`;
        parts.push(
          `--${boundary}\nContent-Type: ${type}; name="${name}"\nContent-Disposition: attachment; filename="${name}"\nContent-Transfer-Encoding: base64\n\n${base64Lines(bytesOf(size))}\n`,
        );
      }
      message = `${[...headers, `Content-Type: multipart/mixed; boundary="${boundary}"`].join('\n')}\n\nThis is a multi-part message in MIME format.\n\n${parts.join('\n')}--${boundary}--\n\n`;
      withAttachments += 1;
      attachments += count;
    }
    const chunk = Buffer.from(message, 'utf8');
    written += chunk.length;
    await write(out, chunk);
  }
  const bytes = await close(out);
  return { path, bytes, items: spec.messages, withAttachments, attachments, replies };
}

export interface CsvSpec {
  rows: number;
  seed?: number;
}

/** One CSV field, quoted as RFC 4180 says (every field quoted: contents hold commas, quotes, newlines). */
const field = (value: string) => `"${value.replaceAll('"', '""')}"`;

/** `2026-11-02 10:00:00 UTC`, the export's DATE format. */
const exportDate = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${clock(d)} UTC`;

export const MESSAGES_CSV_COLUMNS = [
  'CONVERSATION ID',
  'CONVERSATION TITLE',
  'FROM',
  'TO',
  'DATE',
  'SUBJECT',
  'CONTENT',
  'FOLDER',
] as const;

/**
 * Writes a professional network's messages.csv of `rows` rows, as its data export lays it out: one
 * conversation after another (1 to 200 messages each, newest first, two or three people), with a
 * title on some conversations, a subject on the first message of some, and content of one to a few
 * sentences that may hold commas, quotes and line breaks. No two rows share conversation, sender,
 * date and content, so every row is a message of its own to the importer.
 */
export async function writeMessagesCsv(path: string, spec: CsvSpec): Promise<GeneratedFile> {
  const random = seededRandom(spec.seed ?? 17);
  const out = createWriteStream(path);
  await write(out, `${MESSAGES_CSV_COLUMNS.join(',')}\n`);
  const owner = 'Ann Lee';
  let written = 0;
  let conversation = 0;
  let date = Date.UTC(2026, 10, 2, 10, 0, 0);
  const lines: string[] = [];
  while (written < spec.rows) {
    conversation += 1;
    const id = `2-${createHash('md5').update(`c${conversation}`).digest('base64url').slice(0, 22)}==`;
    const others = Array.from({ length: random() < 0.8 ? 1 : 2 }, () => person(random).name);
    const title = random() < 0.2 ? `${pick(random, TOPICS)} with ${others[0]}` : '';
    const length = Math.min(spec.rows - written, 1 + Math.floor(random() ** 2 * 200));
    for (let m = 0; m < length; m += 1) {
      // About five minutes apart on average: a million rows span under ten years.
      date -= 1_000 + Math.floor(random() * 600_000);
      const sentByOwner = random() < 0.5;
      const from = sentByOwner ? owner : pick(random, others);
      const to = sentByOwner ? others.join(', ') : owner;
      const sentences = paragraph(random, 1 + Math.floor(random() * 3));
      if (random() < 0.1) sentences.push(`"${pick(random, WORDS)}", as they said, is ${pick(random, WORDS)}`);
      const content = sentences.join(random() < 0.2 ? '\n' : ' ');
      const subject = m === length - 1 && random() < 0.3 ? pick(random, TOPICS) : '';
      lines.push(
        [id, title, from, to, exportDate(new Date(date)), subject, content, sentByOwner ? 'SENT' : 'INBOX']
          .map(field)
          .join(','),
      );
      written += 1;
      if (lines.length >= 1_000) {
        await write(out, `${lines.join('\n')}\n`);
        lines.length = 0;
      }
    }
  }
  if (lines.length) await write(out, `${lines.join('\n')}\n`);
  const bytes = await close(out);
  return { path, bytes, items: written };
}

/** The three hostile files of issue 29: each one item that never ends, meant to be refused in bounded memory. */
export const HOSTILE_FILES = ['csv-unclosed-quote', 'json-giant-string', 'mbox-giant-header'] as const;
export type HostileFile = (typeof HOSTILE_FILES)[number];

/**
 * A hostile export of about `bytes` bytes, written as a stream: a messages.csv whose third row
 * (line 4) opens a quote that never closes (text with line breaks to the end of the file); a ticket JSON
 * whose third ticket's subject is one string to the end of the file (closed there, so the file is
 * valid JSON); an mbox whose third message's header is folded line after line to the end of the
 * file (a few "Received:"-like continuation lines, no empty line). Two valid items come first, so
 * the import must keep them and name the third (itemIndex 2).
 */
export async function writeHostileFile(path: string, kind: HostileFile, bytes: number): Promise<GeneratedFile> {
  const out = createWriteStream(path);
  const heads: Record<HostileFile, string> = {
    'csv-unclosed-quote':
      'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER\n' +
      'c1,Offer,Ann Lee,Bob Roe,2026-11-02 10:00:00 UTC,Offer,We offer terms,INBOX\n' +
      'c1,Offer,Bob Roe,Ann Lee,2026-11-02 11:00:00 UTC,Re: Offer,Counter terms,INBOX\n' +
      'c2,Filing,Ann Lee,Bob Roe,2026-11-03 09:00:00 UTC,Filing,"the quote that never closes\n',
    'json-giant-string':
      '[{"id": 1, "subject": "Refund", "comments": []}, {"id": 2, "subject": "Account", "comments": []}, {"id": 3, "subject": "',
    'mbox-giant-header': [1, 2]
      .map(
        (n) =>
          `From ann@lee.example Mon Nov  2 10:00:00 2026\nMessage-ID: <m${n}@lee.example>\nFrom: ann@lee.example\nTo: bob@roe.example\nSubject: Message ${n}\n\nBody ${n}.\n\n`,
      )
      .join('')
      .concat('From ann@lee.example Mon Nov  2 10:00:00 2026\nMessage-ID: <m3@lee.example>\nX-Folded: start\n'),
  };
  const pieces: Record<HostileFile, string> = {
    'csv-unclosed-quote': 'settlement terms, as discussed with counsel; see the attached draft\n',
    'json-giant-string': 'settlement terms as discussed with counsel, see the attached draft. ',
    'mbox-giant-header': '\tby relay.lee.example (Postfix) with ESMTPS id 4F2A1B; Mon, 2 Nov 2026\n',
  };
  const tails: Record<HostileFile, string> = {
    'csv-unclosed-quote': '',
    'json-giant-string': '"}]\n',
    'mbox-giant-header': '\nBody 3.\n',
  };
  await write(out, heads[kind]);
  // About 1 MiB at a time: a string the generator reuses, never the file.
  const block = pieces[kind].repeat(Math.ceil(1024 ** 2 / pieces[kind].length));
  let written = Buffer.byteLength(heads[kind]);
  while (written < bytes) {
    await write(out, block);
    written += block.length;
  }
  await write(out, tails[kind]);
  return { path, bytes: await close(out), items: 2 };
}
