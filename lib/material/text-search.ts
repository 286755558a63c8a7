/** Postgres prefix full-text query from free text: every word must match a word start. */
export function prefixTsQuery(text: string): string | null {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 16);
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : null;
}
