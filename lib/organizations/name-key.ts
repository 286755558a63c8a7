import unhomoglyph from 'unhomoglyph';

/**
 * Characters that render as nothing or reorder text: default-ignorable code points (zero-width
 * space, joiners, word joiner, BOM, variation selectors, soft hyphen...), format characters (bidi
 * embeddings, overrides, isolates and marks), controls, and line/paragraph separators.
 */
const INVISIBLE_CLASS = '\\p{Default_Ignorable_Code_Point}\\p{Cf}\\p{Cc}\\p{Zl}\\p{Zp}';
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]`, 'u');
/** The same rule as a JSON Schema pattern (ECMA-262 with the u flag): text with none of those characters. */
export const VISIBLE_TEXT_PATTERN = `^[^${INVISIBLE_CLASS}]*$`;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

/** A name with an invisible character is refused: two names must not differ only by what cannot be seen. */
export const hasInvisibleCharacters = (name: string): boolean => INVISIBLE.test(name.normalize('NFKC'));

/**
 * The key organization names are unique on (column name_key, unique index): NFKC, invisible
 * characters removed, case folded, then the Unicode TR39 skeleton (NFD, each character mapped by
 * the Unicode confusables table of the `unhomoglyph` package, NFD again), case folded again (the
 * table maps some letters to capitals, e.g. 0 -> O), white space runs collapsed.
 * Never contains U+200B or U+2060 (pending-name-keys.ts relies on it).
 */
export function organizationNameKey(name: string): string {
  const visible = name.normalize('NFKC').replace(INVISIBLE_ALL, '');
  const skeleton = unhomoglyph(visible.toLowerCase().normalize('NFD')).normalize('NFD');
  return skeleton.toLowerCase().replace(INVISIBLE_ALL, '').replace(/\s+/gu, ' ').trim().normalize('NFC');
}
