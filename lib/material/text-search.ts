import { type AnyColumn, type SQL, sql, type Table } from 'drizzle-orm';

/** The words of free text a search looks for: letter and digit runs, lowercased, at most 16. */
function searchWords(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 16);
}

/** Postgres prefix full-text query from free text: every word must match a word start. */
export function prefixTsQuery(text: string): string | null {
  const words = searchWords(text);
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : null;
}

/** A word prefix covering more lexemes than this stays a prefix match in the query. */
const MAX_EXPANDED_LEXEMES = 50;

/**
 * The tsquery `to_tsquery('simple', prefixTsQuery(text))` as an SQL expression matching the same
 * vectors, with each word prefix replaced by the exact lexemes it covers, OR-ed, when they are at
 * most MAX_EXPANDED_LEXEMES: a GIN index reads a few exact entries several times faster than a
 * prefix match, which gathers every matching row into a bitmap first. `lexemes` is a C-collated
 * (byte order) column holding every lexeme of the searched vectors, or more: a lexeme no row has
 * matches nothing; it may leave out lexemes starting with a digit (numbers: many, mostly unique),
 * so words starting with one stay prefix matches. `column` is that column of `table`. Null when the text has no words. The words are those to_tsquery would find
 * (the same parser and dictionary, through to_tsvector).
 */
export function expandedPrefixTsQuery(text: string, table: Table, column: AnyColumn): SQL | null {
  const words = searchWords(text);
  if (!words.length) return null;
  // tsquery text of one lexeme, quoted: the cast below takes it as is, with no parsing.
  const quoted = (value: SQL) => sql`('''' || replace(replace(${value}, '\\', '\\\\'), '''', '\\''') || '''')`;
  // In byte order every lexeme starting with w lies in [w, w || U+10FFFF), unless U+10FFFF itself
  // follows w: then the first lexeme from w || U+10FFFF on starts with w, and w stays a prefix.
  return sql`(select string_agg(case
      when x.w !~ '^[0-9]' and cardinality(x.covered) between 1 and ${MAX_EXPANDED_LEXEMES} and not x.beyond
        then '(' || (select string_agg(${quoted(sql`l`)}, ' | ') from unnest(x.covered) l) || ')'
      else ${quoted(sql`x.w`)} || ':*' end, ' & ')::tsquery
    from (
      select w,
        array(select ${column} from ${table}
          where ${column} >= (w collate "C") and ${column} < (w || chr(1114111)) collate "C"
          order by ${column} limit ${MAX_EXPANDED_LEXEMES + 1}) as covered,
        coalesce((select starts_with(${column}, w) from ${table}
          where ${column} >= (w || chr(1114111)) collate "C" order by ${column} limit 1), false) as beyond
      from unnest(tsvector_to_array(to_tsvector('simple', ${words.join(' ')}))) w
    ) x)`;
}
