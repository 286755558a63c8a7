import { describe, expect, it } from 'vitest';
import { parseSearchQuery, searchTerms } from '../../lib/review/search/parse-query';
import { snippetOf } from '../../lib/review/search/snippets';

describe('case search query syntax', () => {
  it.each([
    ['contract', [{ kind: 'word', text: 'contract', exclude: false }], "'contract'"],
    ['"quick brown fox"', [{ kind: 'phrase', text: 'quick brown fox', exclude: false }], "'quick brown fox'"],
    ['contr*', [{ kind: 'prefix', text: 'contr', exclude: false }], "'contr':*"],
    [
      'deal -draft -"lunch talk"',
      [
        { kind: 'word', text: 'deal', exclude: false },
        { kind: 'word', text: 'draft', exclude: true },
        { kind: 'phrase', text: 'lunch talk', exclude: true },
      ],
      "'deal' & !'draft' & !'lunch talk'",
    ],
    // An unclosed quote runs to the end; a one-word phrase is a word.
    [
      'a "b c',
      [
        { kind: 'word', text: 'a', exclude: false },
        { kind: 'phrase', text: 'b c', exclude: false },
      ],
      "'a' & 'b c'",
    ],
    ['"solo"', [{ kind: 'word', text: 'solo', exclude: false }], "'solo'"],
  ])('parses %j', (q, terms, tsquery) => {
    const parsed = parseSearchQuery(q);
    expect(parsed).toEqual({ ok: true, query: { terms, tsquery } });
  });

  it('quotes what the caller typed, so tsquery operators are text', () => {
    const parsed = parseSearchQuery("it's a\\b & | ! <-> (x) :*");
    expect(parsed.ok && parsed.query.tsquery).toBe("'it''s' & 'a\\\\b' & '(x)'");
  });

  it('drops terms without a letter or digit, and refuses a query with nothing to find', () => {
    expect(searchTerms('* - "" -- & !')).toEqual([]);
    expect(parseSearchQuery('***')).toMatchObject({ ok: false });
    expect(parseSearchQuery('-draft -"lunch"')).toMatchObject({ ok: false });
    expect(parseSearchQuery('   ')).toMatchObject({ ok: false });
  });
});

describe('snippets', () => {
  it('reads the marked ranges, collapses white space and never keeps markers', () => {
    const s = snippetOf('  The \uE000quick\uE001\n\n \uE000brown\uE001 fox  ');
    expect(s.text).toBe('The quick brown fox');
    expect(s.highlights.map((h) => s.text.slice(h.start, h.end))).toEqual(['quick', 'brown']);
  });

  it('reads HTML entities of notes as text, ranges counted after decoding', () => {
    const s = snippetOf('Tom &amp; Jerry&#39;s \uE000plan\uE001 &lt;b&gt;', { html: true });
    expect(s.text).toBe("Tom & Jerry's plan <b>");
    expect(s.text.slice(s.highlights[0]!.start, s.highlights[0]!.end)).toBe('plan');
    expect(snippetOf('a &amp; b').text).toBe('a &amp; b');
  });
});
