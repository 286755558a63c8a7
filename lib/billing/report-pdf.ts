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

/** Renders the billing report as a paginated table with section subtotals and the totals. */
export async function renderBillingReportPdf(report: BillingReport, generatedAt: Date): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle('Billing report');
  pdf.setCreationDate(generatedAt);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const mono = await pdf.embedFont(StandardFonts.Courier);
  const monoBold = await pdf.embedFont(StandardFonts.CourierBold);
  let page: PDFPage = pdf.addPage([PAGE.width, PAGE.height]);
  let y = PAGE.height - PAGE.margin;

  const write = (text: string, x: number, options: { font?: PDFFont; size?: number } = {}) => {
    page.drawText(printable(text), {
      x: PAGE.margin + x,
      y,
      size: options.size ?? 8,
      font: options.font ?? font,
      color: rgb(0.1, 0.1, 0.1),
    });
  };
  const newLine = (height = LINE) => {
    y -= height;
    if (y < PAGE.margin) {
      page = pdf.addPage([PAGE.width, PAGE.height]);
      y = PAGE.height - PAGE.margin;
    }
  };
  const header = () => {
    write(rowText(COLUMNS.map((column) => column.title)), 0, { font: monoBold, size: ROW_SIZE });
    newLine(10);
  };

  for (const section of report.organizations) {
    write(`Billing report: ${section.organizationName}`, 0, { font: bold, size: 14 });
    newLine(18);
    write(
      `Window ${section.window.startDate} to ${section.window.endDate}   Tier ${section.tier}   Billing ${section.billingMode}   Generated ${generatedAt.toISOString()}`,
      0,
      { size: 9 },
    );
    newLine(18);
    for (const group of section.cases) {
      write(`${group.caseName} (${group.caseId})`, 0, { font: bold, size: 10 });
      newLine(14);
      header();
      for (const row of group.rows) {
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
        write(rowText(cells), 0, { font: mono, size: ROW_SIZE });
        newLine(10);
      }
      write(
        `Subtotal charged ${formatCents(group.subtotalChargedCents)}   Included in plan (list value) ${formatCents(group.subtotalInformationalCents)}`,
        0,
        { font: bold },
      );
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
