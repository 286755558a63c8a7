import { PDFDocument, type PDFFont, type PDFPage, rgb, StandardFonts } from 'pdf-lib';
import type { BillingReport } from './report';

const PAGE = { width: 842, height: 595, margin: 36 } as const; // A4 landscape, points
const LINE = 12;

/** Dollars from integer cents, exactly: -1234 -> "-$12.34". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

/** The standard fonts speak WinAnsi only: anything else prints as '?'. */
const printable = (text: string) => text.replace(/[^\x20-\x7E\xA0-\xFF]/g, '?');

const COLUMNS = [
  { title: 'Date', x: 0, width: 70 },
  { title: 'SKU', x: 72, width: 130 },
  { title: 'Description', x: 204, width: 250 },
  { title: 'Qty', x: 456, width: 30, right: true },
  { title: 'Unit', x: 488, width: 70, right: true },
  { title: 'Amount', x: 560, width: 70, right: true },
  { title: 'Status', x: 636, width: 60 },
  { title: 'Invoice', x: 698, width: 72 },
] as const;

/** Renders the billing report as a paginated table with section subtotals and the totals. */
export async function renderBillingReportPdf(report: BillingReport, generatedAt: Date): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle('Billing report');
  pdf.setCreationDate(generatedAt);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  let page: PDFPage = pdf.addPage([PAGE.width, PAGE.height]);
  let y = PAGE.height - PAGE.margin;

  const fit = (text: string, width: number, f: PDFFont, size: number) => {
    let value = printable(text);
    while (value.length > 1 && f.widthOfTextAtSize(value, size) > width) value = `${value.slice(0, -2)}.`;
    return value;
  };
  const write = (text: string, x: number, options: { font?: PDFFont; size?: number; width?: number; right?: boolean } = {}) => {
    const f = options.font ?? font;
    const size = options.size ?? 8;
    const value = options.width ? fit(text, options.width, f, size) : printable(text);
    const offset = options.right && options.width ? options.width - f.widthOfTextAtSize(value, size) : 0;
    page.drawText(value, { x: PAGE.margin + x + offset, y, size, font: f, color: rgb(0.1, 0.1, 0.1) });
  };
  const newLine = (height = LINE) => {
    y -= height;
    if (y < PAGE.margin) {
      page = pdf.addPage([PAGE.width, PAGE.height]);
      y = PAGE.height - PAGE.margin;
    }
  };
  const header = () => {
    for (const column of COLUMNS) write(column.title, column.x, { font: bold, width: column.width, right: 'right' in column });
    newLine();
  };

  for (const section of report.organizations) {
    write(`Billing report: ${section.organizationName}`, 0, { font: bold, size: 14 });
    newLine(18);
    write(`Window ${section.window.startDate} to ${section.window.endDate}   Tier ${section.tier}   Billing ${section.billingMode}   Generated ${generatedAt.toISOString()}`, 0, { size: 9 });
    newLine(18);
    for (const group of section.cases) {
      write(`${group.caseName} (${group.caseId})`, 0, { font: bold, size: 10 });
      newLine(14);
      header();
      for (const row of group.rows) {
        const cells = [row.date.slice(0, 10), row.skuKey, row.description, String(row.quantity), formatCents(row.unitAmountCents), formatCents(row.amountCents), row.status, row.invoiceId ?? ''];
        COLUMNS.forEach((column, index) => write(cells[index]!, column.x, { width: column.width, right: 'right' in column }));
        newLine();
      }
      write(`Subtotal charged ${formatCents(group.subtotalChargedCents)}   Included in plan (list value) ${formatCents(group.subtotalInformationalCents)}`, 0, { font: bold });
      newLine(18);
    }
    write(
      `Total charged ${formatCents(section.totalChargedCents)}   Informational ${formatCents(section.totalInformationalCents)}   Not chargeable ${formatCents(section.totalNonChargeableCents)}   Failed ${formatCents(section.totalFailedCents)}   Refunded ${formatCents(section.totalRefundedCents)}`,
      0,
      { font: bold, size: 9 },
    );
    newLine(18);
  }
  write(`Grand total charged ${formatCents(report.grandTotalChargedCents)}`, 0, { font: bold, size: 11 });
  return pdf.save();
}
