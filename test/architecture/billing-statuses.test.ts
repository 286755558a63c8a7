import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BILLING_ROW_STATUSES } from '../../lib/billing/billing-row-lifecycle';

/**
 * Billing-row statuses have one home, lib/billing/billing-row-lifecycle.ts: the values, the moves and
 * the named groups. A list of two or more statuses spelled out elsewhere (an array, or SQL's
 * `in (…)`) is a group that can drift from the lifecycle; so is the stored spelling `INVOICED`.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const HOME = 'lib/billing/billing-row-lifecycle.ts';
const STATUS = `'(?:${BILLING_ROW_STATUSES.join('|')})'`;
const STATUS_LIST = new RegExp(`[[(]\\s*${STATUS}(?:\\s*,\\s*${STATUS})+`, 'g');

/** The code of a source, comments blanked (line numbers kept). */
const withoutComments = (source: string) =>
  source.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');

/** Where a source spells out a status group or the stored `INVOICED`, as `line: text`. */
export function spelledStatuses(source: string): string[] {
  const code = withoutComments(source);
  const lineOf = (index: number) => code.slice(0, index).split('\n').length;
  return [...code.matchAll(STATUS_LIST), ...code.matchAll(/'INVOICED'/g)]
    .map((match) => ({ line: lineOf(match.index), text: match[0] }))
    .sort((a, b) => a.line - b.line)
    .map(({ line, text }) => `${line}: ${text}`);
}

describe('billing-row statuses', () => {
  it('finds status lists and the stored INVOICED, not comments or single statuses', () => {
    const sample = [
      "const UNPAID = ['processing', 'INVOICED', 'failed'] as const;",
      "where status in ('processing', 'paid')",
      "// ['processing', 'paid']",
      "if (status === 'paid') return;",
    ].join('\n');
    expect(spelledStatuses(sample)).toEqual([
      "1: ['processing', 'INVOICED', 'failed'",
      "1: 'INVOICED'",
      "2: ('processing', 'paid'",
    ]);
  });

  it(`spells status groups only in ${HOME}`, () => {
    const files = readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `lib/${name.split('\\').join('/')}`)
      .filter((file) => file !== HOME);
    const spelled = files.flatMap((file) =>
      spelledStatuses(readFileSync(join(ROOT, file), 'utf8')).map((where) => `${file}:${where}`),
    );
    expect(spelled).toEqual([]);
  });
});
