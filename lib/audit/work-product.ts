import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** RFC 8785 canonical JSON of `value`: the same text for the same value, whatever its key order. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('Value cannot be serialized');
  return text;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * What an audit event keeps of opposing counsel's work product (their queries, tags and taggings,
 * which the firm reads in the trail): the names of its fields, sorted, and the SHA-256 (hex) of its
 * canonical JSON, which proves a value they later present was the one used, and shows nothing else.
 */
export function sealWorkProduct(value: Record<string, unknown>): { keys: string[]; sha256: string } {
  return { keys: Object.keys(value).sort(), sha256: sha256Hex(canonicalJson(value)) };
}
