/**
 * The case search's query syntax (GET /cases/{caseId}/search `q`): words (each must match a whole
 * word), "quoted phrases" (adjacent words in order), `-excluded` words or phrases (must not match)
 * and `prefix*` (a word start). Pure: no database.
 */

export type SearchTermKind = 'word' | 'phrase' | 'prefix';

export interface SearchTerm {
  kind: SearchTermKind;
  /** The term as typed, without its quotes, `-` and `*`. */
  text: string;
  exclude: boolean;
}

export interface ParsedSearchQuery {
  terms: SearchTerm[];
  /**
   * The text for `to_tsquery('simple', …)`: every term single-quoted (its own quotes and
   * backslashes escaped), so nothing the caller typed is read as tsquery syntax; the parser and
   * the 'simple' dictionary then make lexemes of it as they made the searched vectors (a quoted
   * text of several words becomes a phrase, `<->`). Terms are AND-ed; exclusions are `!`.
   */
  tsquery: string;
}

export type ParseResult = { ok: true; query: ParsedSearchQuery } | { ok: false; message: string };

/** A term finds something only when it holds a letter or a digit: the rest is punctuation to the parser. */
const HAS_WORD = /[\p{L}\p{N}]/u;

const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The terms of `q`, in order; terms without a letter or digit are dropped. */
export function searchTerms(q: string): SearchTerm[] {
  const text = q.normalize('NFKC');
  const terms: SearchTerm[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/u.test(text[i]!)) {
      i += 1;
      continue;
    }
    let exclude = false;
    if (text[i] === '-') {
      exclude = true;
      i += 1;
    }
    if (text[i] === '"') {
      // A phrase runs to the next quote, or to the end when it is never closed.
      const end = text.indexOf('"', i + 1);
      const phrase = text.slice(i + 1, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end + 1;
      const words = phrase.trim();
      if (HAS_WORD.test(words)) terms.push({ kind: /\s/u.test(words) ? 'phrase' : 'word', text: words, exclude });
      continue;
    }
    let end = i;
    while (end < text.length && !/\s/u.test(text[end]!) && text[end] !== '"') end += 1;
    const raw = text.slice(i, end);
    i = end;
    const prefix = /\*+$/.test(raw);
    const word = raw.replace(/\*+$/, '');
    if (HAS_WORD.test(word)) terms.push({ kind: prefix ? 'prefix' : 'word', text: word, exclude });
  }
  return terms;
}

/**
 * Parses `q`. A query needs at least one word, phrase or prefix to find: one of exclusions only
 * (or only punctuation) is refused, so every search starts from index entries and never reads
 * the whole case.
 */
export function parseSearchQuery(q: string): ParseResult {
  const terms = searchTerms(q);
  if (!terms.some((t) => !t.exclude))
    return {
      ok: false,
      message: 'q needs at least one word, "phrase" or prefix* to find (not only -exclusions)',
    };
  const tsquery = terms
    .map((t) => `${t.exclude ? '!' : ''}${quoted(t.text)}${t.kind === 'prefix' ? ':*' : ''}`)
    .join(' & ');
  return { ok: true, query: { terms, tsquery } };
}
