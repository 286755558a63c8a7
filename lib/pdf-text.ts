import { deflateSync } from 'node:zlib';
import { type PDFDocument, PDFRawStream, type PDFRef } from 'pdf-lib';

/**
 * What the PDFs that write their own page content (the chain of custody, the billing report)
 * share: pages of text are content streams written as operators, not pdf-lib's drawText, which
 * builds about ten objects a line and keeps them until `save()`.
 */

/** The standard fonts speak WinAnsi only: anything else prints as '?'. */
export const printable = (text: string) => text.replace(/[^\x20-\x7E\xA0-\xFF]/g, '?');

/**
 * The longest text a client chose (a name, a file name, a source, a user agent, a request id, a
 * target) printed into a PDF, in characters: nobody can fill a document the firm files with text
 * of their choosing.
 */
export const PDF_TEXT_MAX = 120;

/** `text` made printable and cut to `max` characters, the cut shown by `...` (WinAnsi text only). */
export function bounded(text: string, max = PDF_TEXT_MAX): string {
  const clean = printable(text);
  return clean.length <= max ? clean : `${clean.slice(0, max - 3)}...`;
}

/** A PDF literal string of WinAnsi text (`printable` keeps only characters WinAnsi and Latin-1 agree on). */
export const pdfLiteral = (text: string) => `(${printable(text).replace(/[\\()]/g, '\\$&')})`;

/**
 * A page's content operators as a stream registered in `pdf`, deflated by Node's zlib rather than
 * pdf-lib's JavaScript deflate (most of the time of a large document). Copied out of zlib's
 * answer: it is a view of a 16 KiB output chunk, and a thousand pages would keep a thousand chunks
 * alive for a kilobyte each.
 */
export function deflatedContentStream(pdf: PDFDocument, operators: string, level?: number): PDFRef {
  const compressed = new Uint8Array(
    deflateSync(Buffer.from(operators, 'latin1'), level === undefined ? {} : { level }),
  );
  return pdf.context.register(PDFRawStream.of(pdf.context.obj({ Filter: 'FlateDecode' }), compressed));
}
