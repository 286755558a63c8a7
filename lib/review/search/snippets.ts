/** Where ts_headline marks a match: two private-use characters, removed from the text beforehand. */
export const HIGHLIGHT_START = '\uE000';
export const HIGHLIGHT_STOP = '\uE001';

/** ts_headline's options: up to two fragments of a few words around the matches, marked by the characters above. */
/** A text up to this many characters is its own snippet, whole, every match marked. */
export const SHORT_TEXT = 240;
export const WHOLE_TEXT_OPTIONS = `StartSel=${HIGHLIGHT_START}, StopSel=${HIGHLIGHT_STOP}, HighlightAll=true`;

export const HEADLINE_OPTIONS = `StartSel=${HIGHLIGHT_START}, StopSel=${HIGHLIGHT_STOP}, MaxFragments=2, MaxWords=24, MinWords=12, FragmentDelimiter=" … "`;

export interface Snippet {
  text: string;
  /** Character ranges of `text` (UTF-16 code units, as JavaScript's `String.prototype.slice` counts): `text.slice(start, end)` is a match. */
  highlights: Array<{ start: number; end: number }>;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The character an HTML entity stands for, or null when it is not one we read. */
function entity(name: string): string | null {
  const lower = name.toLowerCase();
  if (lower in ENTITIES) return ENTITIES[lower]!;
  const code = lower.startsWith('#x')
    ? Number.parseInt(lower.slice(2), 16)
    : lower.startsWith('#')
      ? Number(lower.slice(1))
      : Number.NaN;
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : null;
}

/**
 * The snippet of a headline marked with HIGHLIGHT_START/STOP: plain text (white space runs as one
 * space, trimmed; with `html`, entities read as the characters they stand for, the tags were
 * dropped before) and the ranges that were marked. Never HTML: what a client shows it shows as text.
 */
export function snippetOf(headline: string, options: { html?: boolean } = {}): Snippet {
  const pattern = options.html
    ? /(\uE000)|(\uE001)|(\s+)|&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,6});/giu
    : /(\uE000)|(\uE001)|(\s+)/gu;
  let text = '';
  const highlights: Snippet['highlights'] = [];
  let open: number | null = null;
  let last = 0;
  for (const match of headline.matchAll(pattern)) {
    text += headline.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[1]) open = text.length;
    else if (match[2]) {
      if (open !== null && text.length > open) highlights.push({ start: open, end: text.length });
      open = null;
    } else if (match[3]) {
      if (text.length > 0 && !text.endsWith(' ')) text += ' ';
    } else {
      text += entity(match[4]!) ?? match[0];
    }
  }
  text += headline.slice(last);
  if (open !== null && text.length > open) highlights.push({ start: open, end: text.length });
  // Trailing space: cut it, and any range that ran into it.
  const trimmed = text.trimEnd();
  return {
    text: trimmed,
    highlights: highlights
      .map((h) => ({ start: h.start, end: Math.min(h.end, trimmed.length) }))
      .filter((h) => h.end > h.start),
  };
}
