import { describe, expect, it } from 'vitest';
import { computeProration } from '../../lib/billing/base-fee-proration';

/** The settlement of the current base fee on a plan change, computed without a database. */

const start = new Date('2026-01-01T00:00:00Z');
const end = new Date('2026-01-31T00:00:00Z');
const halfway = new Date('2026-01-16T00:00:00Z');
const tier1Monthly = { tier: 'tier1', cadence: 'monthly' } as const; // 4,900 cents
const tier1Annual = { tier: 'tier1', cadence: 'annual' } as const; // 49,000 cents

const credit = (cents: number, description: string) => ({
  caseId: null,
  skuKey: 'platform_base_fee_proration',
  description,
  quantity: 1,
  unitAmountCents: -cents,
});
const used = (cents: number, description: string) => ({
  caseId: null,
  skuKey: 'platform_base_fee_used',
  description,
  quantity: 1,
  unitAmountCents: cents,
});

describe('computeProration', () => {
  it.each([
    {
      name: 'a paid fee halfway through credits the unused half',
      from: tier1Monthly,
      at: halfway,
      fee: { status: 'paid' as const },
      expected: { lines: [credit(2_450, 'Unused part of the tier1 monthly base fee')], outstanding: false },
    },
    {
      name: 'a paid fee floors the unused part to the cent',
      from: tier1Annual,
      at: new Date('2026-01-02T00:00:00Z'),
      fee: { status: 'paid' as const },
      // 49,000 × 29/30 = 47,366.66...
      expected: { lines: [credit(47_366, 'Unused part of the tier1 annual base fee')], outstanding: false },
    },
    {
      name: 'a paid fee at the end of its period credits nothing',
      from: tier1Monthly,
      at: end,
      fee: { status: 'paid' as const },
      expected: { lines: [], outstanding: false },
    },
    {
      name: 'no fee to settle (waived, voided or none) gives no line',
      from: tier1Monthly,
      at: halfway,
      fee: null,
      expected: { lines: [], outstanding: false },
    },
    {
      name: 'an unpaid fee bills the used half again',
      from: tier1Monthly,
      at: halfway,
      fee: { status: 'unpaid' as const, invoiceId: null, receivedCents: 0 },
      expected: { lines: [used(2_450, 'Used part of the unpaid tier1 monthly base fee')], outstanding: true },
    },
    {
      name: 'an unpaid invoiced fee names its voided invoice and credits what was received',
      from: tier1Monthly,
      at: halfway,
      fee: { status: 'unpaid' as const, invoiceId: 'in_123', receivedCents: 1_000 },
      expected: {
        lines: [
          used(2_450, 'Used part of the unpaid tier1 monthly base fee, invoice in_123 voided'),
          credit(1_000, 'Already paid toward the voided tier1 monthly base fee'),
        ],
        outstanding: true,
      },
    },
    {
      name: 'an unpaid fee changed at the start of its period bills nothing used',
      from: tier1Monthly,
      at: start,
      fee: { status: 'unpaid' as const, invoiceId: null, receivedCents: 0 },
      expected: { lines: [], outstanding: true },
    },
    {
      name: 'an unpaid fee past its period bills it whole',
      from: tier1Monthly,
      at: new Date('2026-02-10T00:00:00Z'),
      fee: { status: 'unpaid' as const, invoiceId: null, receivedCents: 0 },
      expected: { lines: [used(4_900, 'Used part of the unpaid tier1 monthly base fee')], outstanding: true },
    },
  ])('$name', ({ from, at, fee, expected }) => {
    // Act
    const proration = computeProration({ from, period: { start, end }, at, fee });
    // Assess
    expect(proration).toEqual(expected);
  });

  it('treats a fee with no recorded period as wholly used', () => {
    const proration = computeProration({
      from: tier1Monthly,
      period: { start: null, end: null },
      at: halfway,
      fee: { status: 'paid' },
    });
    expect(proration).toEqual({ lines: [], outstanding: false });
  });
});
