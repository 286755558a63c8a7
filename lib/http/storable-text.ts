// U+0000 and unpaired UTF-16 surrogates. Postgres text rejects the first, jsonb both, and text
// silently turns a lone surrogate into U+FFFD: valid JSON strings that would otherwise be a 500
// or evidence stored corrupted, so every route refuses them as bad input (400 naming the field).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point.
const UNSTORABLE = /[\u0000\p{Cs}]/u;

export const UNSTORABLE_TEXT_MESSAGE = 'Must not contain NUL characters or unpaired surrogates';

export const isStorableText = (value: string): boolean => !UNSTORABLE.test(value);

/**
 * The paths (below `root`) of every string or object key inside `value` that Postgres cannot
 * store; a bad key is reported at its object. Walked without recursion, whatever the depth.
 */
export function unstorableTextPaths(value: unknown, root: string): string[] {
  const found: string[] = [];
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (pending.length > 0) {
    const current = pending.pop()!;
    if (typeof current.value === 'string') {
      if (!isStorableText(current.value)) found.push(current.path);
    } else if (Array.isArray(current.value)) {
      for (const [index, item] of current.value.entries())
        pending.push({ value: item, path: `${current.path}.${index}` });
    } else if (current.value !== null && typeof current.value === 'object') {
      for (const [key, item] of Object.entries(current.value)) {
        if (!isStorableText(key)) found.push(current.path);
        pending.push({ value: item, path: `${current.path}.${key}` });
      }
    }
  }
  return [...new Set(found)].sort();
}
