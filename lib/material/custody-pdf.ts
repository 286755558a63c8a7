import { PDFDocument, type PDFFont, PDFPage, StandardFonts } from 'pdf-lib';
import { bounded, deflatedContentStream, pdfLiteral, printable } from '../pdf-text';
import type { CaseCustody, CustodyEvent, CustodyItem } from './custody';

/** Where a volume of a background export (lib/material/custody-exports) sits in the whole record. */
export interface CustodyVolume {
  number: number;
  /** Items before this volume's first, and the case's total; the same for events. */
  itemsBefore: number;
  itemTotal: number;
  eventsBefore: number;
  eventTotal: number;
}

const PAGE = { width: 842, height: 595, margin: 36 } as const; // A4 landscape, points
/** Courier at 7 pt is 4.2 pt a character: 183 fit between the margins; lines wrap before that. */
const MONO_SIZE = 7;
const LINE = 9;
const WRAP = 180;
/** A SHA-256 in hex: 64 characters, always printed whole on one line. */
const HASH_WIDTH = 64;
/** The longest an event's metadata is printed, as JSON (it holds names and queries clients chose). */
const METADATA_MAX = 240;

/**
 * `text` cut into lines of at most WRAP characters, the continuations indented. What a client chose
 * is bounded before it gets here (`bounded`), so no line runs on for pages.
 */
function wrap(text: string, indent = '    '): string[] {
  const clean = printable(text);
  if (clean.length <= WRAP) return [clean];
  const lines = [clean.slice(0, WRAP)];
  for (let start = WRAP; start < clean.length; start += WRAP - indent.length)
    lines.push(indent + clean.slice(start, start + WRAP - indent.length));
  return lines;
}

const cell = (text: string, width: number) => text.padEnd(width);
const hashOrNone = (sha256: string | null) => sha256 ?? '(no hash recorded)'.padEnd(HASH_WIDTH);

const ITEM_HEADER = `${cell('Kind', 16)} ${cell('SHA-256', HASH_WIDTH)} ${'Bytes'.padStart(14)}  ${cell('Imported at', 24)} Imported by`;

function itemLines(item: CustodyItem): string[] {
  const size = item.sizeBytes === null ? '-' : String(item.sizeBytes);
  return [
    `${cell(item.kind, 16)} ${hashOrNone(item.sha256)} ${size.padStart(14)}  ${cell(item.importedAt, 24)} ${item.importedBy ?? '-'}`,
    ...wrap(`    id ${bounded(item.id)}   source ${item.source === null ? '-' : bounded(item.source)}`),
  ];
}

function eventLines(event: CustodyEvent): string[] {
  const actor = [event.actor.type, event.actor.userId, event.actor.tokenId && `token ${event.actor.tokenId}`]
    .filter(Boolean)
    .join(' ');
  const target = event.target ? bounded(`${event.target.type} ${event.target.id}`) : '-';
  const optional = (text: string | null) => (text === null ? '-' : bounded(text));
  const repeated = event.count > 1 ? `  read ${event.count} times within the hour` : '';
  return [
    ...wrap(`#${event.sequence}  ${event.occurredAt}  ${event.action}  by ${actor}  id ${event.id}${repeated}`),
    `    hash ${event.hash}   prev ${event.prevHash}`,
    ...wrap(
      `    target ${target}   ip ${optional(event.ip)}   request ${optional(event.requestId)}   client request ${optional(event.clientRequestId)}`,
    ),
    ...wrap(`    agent ${optional(event.userAgent)}`),
    ...wrap(`    metadata ${bounded(JSON.stringify(event.metadata), METADATA_MAX)}`),
  ];
}

/** What a line is set in: the three standard fonts of the document. */
type Face = 'title' | 'mono' | 'monoBold';
const SIZE: Record<Face, number> = { title: 12, mono: MONO_SIZE, monoBold: MONO_SIZE };

/**
 * Renders the chain of custody: the case, when, the organization's chain head, then every item
 * and every event. Every hash is printed whole on one line (64 hex characters in Courier).
 *
 * A case may hold hundreds of thousands of items, so pages are written as content streams here
 * rather than with drawText: consecutive lines in one font are one text object (two operators a
 * line), and each page is deflated by Node's zlib instead of pdf-lib's JavaScript deflate, which
 * with its text encoding took most of the time (300,000 items: 21 MB, about 10 s).
 */
export async function renderCustodyPdf(
  custody: Omit<CaseCustody, 'generatedAt'> & { caseName: string; volume?: CustodyVolume },
  generatedAt: Date,
): Promise<Uint8Array> {
  const { volume } = custody;
  const pdf = await PDFDocument.create();
  pdf.setTitle(`Chain of custody: ${bounded(custody.caseName)}${volume ? `, volume ${volume.number}` : ''}`);
  pdf.setSubject(`Case ${custody.caseId}`);
  pdf.setCreationDate(generatedAt);
  pdf.setModificationDate(generatedAt);
  const fonts: Record<Face, PDFFont> = {
    title: await pdf.embedFont(StandardFonts.HelveticaBold),
    mono: await pdf.embedFont(StandardFonts.Courier),
    monoBold: await pdf.embedFont(StandardFonts.CourierBold),
  };

  let page: PDFPage | null = null;
  const pages: PDFPage[] = [];
  let keys = {} as Record<Face, string>;
  let operators: string[] = [];
  let y = 0;
  // The face of the open text object (BT ... ET), if one is open.
  let open: Face | null = null;

  const closeText = () => {
    if (open) operators.push('ET');
    open = null;
  };
  const finishPage = () => {
    if (!page) return;
    closeText();
    page.node.addContentStream(deflatedContentStream(pdf, operators.join('\n'), 1));
    operators = [];
  };
  const newPage = () => {
    finishPage();
    page = PDFPage.create(pdf);
    page.setSize(PAGE.width, PAGE.height);
    pages.push(page);
    const node = page.node;
    keys = {
      title: node.newFontDictionary(fonts.title.name, fonts.title.ref).asString(),
      mono: node.newFontDictionary(fonts.mono.name, fonts.mono.ref).asString(),
      monoBold: node.newFontDictionary(fonts.monoBold.name, fonts.monoBold.ref).asString(),
    };
    y = PAGE.height - PAGE.margin;
  };
  /** One line, LINE below the previous one; lines of one face in a row share a text object. */
  const line = (text: string, face: Face = 'mono') => {
    if (!page || y < PAGE.margin) newPage();
    if (open === face) operators.push('T*');
    else {
      closeText();
      operators.push('BT', `${keys[face]} ${SIZE[face]} Tf`, `${LINE} TL`, '0.1 0.1 0.1 rg', `${PAGE.margin} ${y} Td`);
      open = face;
    }
    operators.push(`${pdfLiteral(text)} Tj`);
    y -= LINE;
  };
  /** Lines that belong together stay on one page. */
  const block = (lines: string[]) => {
    if (!page || y - (lines.length - 1) * LINE < PAGE.margin) newPage();
    for (const text of lines) line(text);
  };
  const gap = (height: number) => {
    closeText();
    y -= height;
  };
  const heading = (text: string) => {
    if (!page || y - 3 * LINE < PAGE.margin) newPage();
    closeText();
    y -= 2;
    line(text, 'title');
    closeText();
    y -= 18 - LINE - 2;
  };

  const range = (before: number, count: number, total: number) =>
    count === 0 ? `none of ${total}` : `${before + 1} to ${before + count} of ${total}`;
  heading(volume ? `Chain of custody, volume ${volume.number}` : 'Chain of custody');
  for (const text of [
    ...wrap(`Case ${bounded(custody.caseName)}`),
    `Case id ${custody.caseId}`,
    `Generated ${generatedAt.toISOString()}`,
    `Organization chain head: sequence ${custody.chainHead.sequence}`,
    `Organization chain head hash ${custody.chainHead.hash}`,
    volume
      ? `${volume.itemTotal} evidence item(s), ${volume.eventTotal} audit event(s) of the case, in volumes; this volume: items ${range(volume.itemsBefore, custody.items.length, volume.itemTotal)}, events ${range(volume.eventsBefore, custody.events.length, volume.eventTotal)}`
      : `${custody.items.length} evidence item(s), ${custody.events.length} audit event(s) of the case`,
  ])
    line(text, 'monoBold');
  gap(12);

  // A volume shows the sections it holds records of; the whole record (or the first volume) both.
  const itemsHere = !volume || custody.items.length > 0 || volume.itemsBefore === 0;
  const eventsHere =
    !volume || custody.events.length > 0 || volume.itemsBefore + custody.items.length === volume.itemTotal;
  if (itemsHere) {
    heading(
      volume
        ? `Evidence items ${range(volume.itemsBefore, custody.items.length, volume.itemTotal)}`
        : `Evidence items (${custody.items.length})`,
    );
    line(ITEM_HEADER, 'monoBold');
    for (const item of custody.items) block(itemLines(item));
    if (custody.items.length === 0 && (volume?.itemTotal ?? 0) === 0) line('No evidence imported.');
    gap(12);
  }

  if (eventsHere) {
    heading(
      volume
        ? `Audit events of the case ${range(volume.eventsBefore, custody.events.length, volume.eventTotal)}, oldest first`
        : `Audit events of the case (${custody.events.length}), oldest first`,
    );
    for (const event of custody.events) block([...eventLines(event), '']);
    if (custody.events.length === 0 && (volume?.eventTotal ?? 0) === 0) line('No events recorded.');
  }
  finishPage();
  // Appending a page scans every page before it (pdf-lib's page tree); inserting at the front does
  // not, so the pages go in last to first.
  for (const done of pages.reverse()) pdf.insertPage(0, done);
  return pdf.save();
}
