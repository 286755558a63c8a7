import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { serviceSecretBytes } from '../auth/jwt';

/** SHA-256 hex of a canonical JSON (object keys sorted), so equal requests hash equally. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** The AES key of one stored answer: only a caller holding the raw idempotency key can derive it. */
async function answerKey(rawKey: string, scope: string, route: string): Promise<Buffer> {
  const info = `idempotency-answer\0${scope}\0${route}`;
  return Buffer.from(hkdfSync('sha256', await serviceSecretBytes(), Buffer.from(rawKey, 'utf8'), info, 32));
}

/** AES-256-GCM; the result is base64 of iv (12 bytes), tag (16 bytes) and ciphertext. */
export async function sealAnswer(plain: string, rawKey: string, scope: string, route: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await answerKey(rawKey, scope, route), iv);
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

export async function openAnswer(sealed: string, rawKey: string, scope: string, route: string): Promise<string> {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', await answerKey(rawKey, scope, route), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
