import { decodePDFRawStream, PDFArray, PDFDocument, PDFRawStream } from 'pdf-lib';

/**
 * A PDF the service wrote (the chain of custody, the billing report), read back: its page count and
 * every string its pages show with `Tj`, in order, literal strings unescaped and hex strings decoded.
 * The documents write their own content streams (lib/pdf-text.ts), so this is what a reader sees.
 */
export async function pdfText(bytes: Uint8Array): Promise<{ pages: number; lines: string[]; text: string }> {
  const pdf = await PDFDocument.load(bytes);
  const lines: string[] = [];
  for (const page of pdf.getPages()) {
    const contents = page.node.Contents();
    const streams = !contents
      ? []
      : contents instanceof PDFArray
        ? contents.asArray().map((ref) => pdf.context.lookup(ref))
        : [contents];
    for (const stream of streams) {
      if (!(stream instanceof PDFRawStream)) throw new Error('Unexpected content stream');
      const operators = Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1');
      for (const [, hex, literal] of operators.matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:\\.|[^\\()])*)\)\s*Tj/g))
        lines.push(hex !== undefined ? Buffer.from(hex, 'hex').toString('latin1') : literal!.replace(/\\(.)/g, '$1'));
    }
  }
  return { pages: pdf.getPageCount(), lines, text: lines.join('\n') };
}
