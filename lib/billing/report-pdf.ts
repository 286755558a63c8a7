import { PDFDocument, PDFName, type PDFPage, type PDFRef, StandardFonts } from 'pdf-lib';
import { bounded, deflatedContentStream, pdfLiteral, printable } from '../pdf-text';
import type { BillingReport, BillingReportRow, BillingReportSink } from './report';

const PAGE = { width: 842, height: 595, margin: 36 } as const; // A4 landscape, points
const LINE = 12;

/** Dollars from integer cents, exactly: -1234 -> "-$12.34". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * Row columns in characters. Rows are set in Courier (monospace), one text run per row: columns
 * line up, and a 50,000-row report stays a few hundred thousand PDF operators, not millions.
 */
const COLUMNS = [
  { title: 'Date', chars: 10 },
  { title: 'SKU', chars: 32 },
  { title: 'Description', chars: 53 },
  { title: 'Qty', chars: 5, right: true },
  { title: 'Unit', chars: 13, right: true },
  { title: 'Amount', chars: 14, right: true },
  { title: 'Status', chars: 13 },
  { title: 'Invoice', chars: 33 }, // a whole processor invoice id: finance matches rows by it
] as const;
const ROW_SIZE = 7;

function rowText(cells: string[]): string {
  return COLUMNS.map((column, index) => {
    const text = printable(cells[index] ?? '');
    const cut = text.length > column.chars ? `${text.slice(0, column.chars - 1)}.` : text;
    return 'right' in column ? cut.padStart(column.chars) : cut.padEnd(column.chars);
  }).join(' ');
}

const FONTS = {
  regular: { name: 'F1', font: StandardFonts.Helvetica },
  bold: { name: 'F2', font: StandardFonts.HelveticaBold },
  mono: { name: 'F3', font: StandardFonts.Courier },
  monoBold: { name: 'F4', font: StandardFonts.CourierBold },
} as const;
type Font = keyof typeof FONTS;

type Heading = Pick<BillingReport['organizations'][number], 'organizationName' | 'tier' | 'billingMode' | 'window'>;
type Totals = Pick<
  BillingReport['organizations'][number],
  | 'totalChargedCents'
  | 'totalInformationalCents'
  | 'totalNonChargeableCents'
  | 'totalFailedCents'
  | 'totalRefundedCents'
>;

/**
 * The billing report as a paginated table with section subtotals and the totals, written as the
 * rows stream in (a BillingReportSink). Each page's content stream is written as text operators
 * and compressed when the page is full, so the document holds a few kilobytes per page instead of
 * pdf-lib's operator objects for every row (drawText builds about ten objects per line); the
 * document itself (fonts, pages, metadata, serialization) is still pdf-lib's.
 */
export class BillingReportPdf implements BillingReportSink {
  private page!: PDFPage;
  private y = 0;
  /** The current page's content operators, one text line per entry. */
  private lines: string[] = [];
  private font: string | undefined;

  private constructor(
    private readonly pdf: PDFDocument,
    /** One resource dictionary (the four fonts) shared by every page. */
    private readonly resources: PDFRef,
  ) {
    this.addPage();
  }

  static async start(heading: Heading, generatedAt: Date): Promise<BillingReportPdf> {
    const pdf = await PDFDocument.create();
    pdf.setTitle('Billing report');
    pdf.setCreationDate(generatedAt);
    const fonts: Record<string, PDFRef> = {};
    for (const { name, font } of Object.values(FONTS)) fonts[name] = (await pdf.embedFont(font)).ref;
    const writer = new BillingReportPdf(pdf, pdf.context.register(pdf.context.obj({ Font: fonts })));
    writer.write(`Billing report: ${bounded(heading.organizationName)}`, { font: 'bold', size: 14 });
    writer.newLine(18);
    writer.write(
      `Window ${heading.window.startDate} to ${heading.window.endDate}   Tier ${heading.tier}   Billing ${heading.billingMode}   Generated ${generatedAt.toISOString()}`,
      { size: 9 },
    );
    writer.newLine(18);
    return writer;
  }

  section(caseId: string, caseName: string): void {
    this.write(`${bounded(caseName)} (${caseId})`, { font: 'bold', size: 10 });
    this.newLine(14);
    this.write(rowText(COLUMNS.map((column) => column.title)), { font: 'monoBold', size: ROW_SIZE });
    this.newLine(10);
  }

  row(row: BillingReportRow): void {
    const cells = [
      row.date.slice(0, 10),
      row.skuKey,
      row.description,
      String(row.quantity),
      formatCents(row.unitAmountCents),
      formatCents(row.amountCents),
      row.status,
      row.invoiceId ?? '',
    ];
    this.write(rowText(cells), { font: 'mono', size: ROW_SIZE });
    this.newLine(10);
  }

  sectionEnd(subtotals: { subtotalChargedCents: number; subtotalInformationalCents: number }): void {
    this.write(
      `Subtotal charged ${formatCents(subtotals.subtotalChargedCents)}   Included in plan (list value) ${formatCents(subtotals.subtotalInformationalCents)}`,
      { font: 'bold' },
    );
    this.newLine(18);
  }

  /** Writes the totals and the grand total, and answers the document's bytes. */
  async finish(totals: Totals, grandTotalChargedCents: number): Promise<Uint8Array> {
    this.write(
      `Total charged ${formatCents(totals.totalChargedCents)}   Informational ${formatCents(totals.totalInformationalCents)}   Not chargeable ${formatCents(totals.totalNonChargeableCents)}   Failed ${formatCents(totals.totalFailedCents)}   Refunded ${formatCents(totals.totalRefundedCents)}`,
      { font: 'bold', size: 9 },
    );
    this.newLine(18);
    this.write(`Grand total charged ${formatCents(grandTotalChargedCents)}`, { font: 'bold', size: 11 });
    this.endPage();
    return this.pdf.save();
  }

  /** One line of text at the current height, in dark grey as every line of the report. */
  private write(text: string, options: { font?: Font; size?: number } = {}): void {
    const font = `/${FONTS[options.font ?? 'regular'].name} ${options.size ?? 8} Tf`;
    if (font !== this.font) {
      this.lines.push(font);
      this.font = font;
    }
    this.lines.push(`1 0 0 1 ${PAGE.margin} ${this.y} Tm ${pdfLiteral(text)} Tj`);
  }

  private newLine(height = LINE): void {
    this.y -= height;
    if (this.y < PAGE.margin) {
      this.endPage();
      this.addPage();
    }
  }

  private addPage(): void {
    this.page = this.pdf.addPage([PAGE.width, PAGE.height]);
    this.page.node.set(PDFName.of('Resources'), this.resources);
    this.y = PAGE.height - PAGE.margin;
    this.lines = [];
    this.font = undefined;
  }

  /** Compresses the page's operators into its content stream (a page with no text gets none). */
  private endPage(): void {
    if (this.lines.length === 0) return;
    const content = deflatedContentStream(this.pdf, `BT\n0.1 0.1 0.1 rg\n${this.lines.join('\n')}\nET\n`);
    this.page.node.set(PDFName.of('Contents'), content);
    this.lines = [];
  }
}
