import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { config } from './config';

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keyLength: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const KEY_LENGTH = 32;

/** scrypt (memory-hard), parameters stored with the hash: `scrypt$logN$r$p$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const logN = config().PASSWORD_HASH_LOG_N;
  const r = 8;
  const p = 1;
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, scryptOptions(logN, r, p));
  return ['scrypt', logN, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algorithm, logN, r, p, salt, expected] = stored.split('$');
  if (algorithm !== 'scrypt' || !logN || !r || !p || !salt || !expected) return false;
  const expectedKey = Buffer.from(expected, 'base64url');
  const key = await scrypt(
    password.normalize('NFKC'),
    Buffer.from(salt, 'base64url'),
    expectedKey.length,
    scryptOptions(Number(logN), Number(r), Number(p)),
  );
  return timingSafeEqual(key, expectedKey);
}

function scryptOptions(logN: number, r: number, p: number) {
  const N = 2 ** logN;
  return { N, r, p, maxmem: 256 * N * r };
}

/** A password hash to compare against when the user does not exist, so timing does not tell. */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return decoyHash;
}

/** An opaque bearer secret: prefix plus 256 random bits. Only its hash is ever stored. */
export function newOpaqueToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/**
 * SHA-256 of a high-entropy token. Lookup is by this digest, so no secret is compared byte by
 * byte in our code; the database index compares digests, which leaks nothing usable.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * A key for local runs (no secret configured): random bytes generated once into DATA_DIR/<file>
 * (mode 0600), so what it signs survives a restart and nobody can derive it from the path. Created
 * atomically (a temporary file hard-linked into place), so processes starting together agree on
 * one key. Used for the local JWT key and the local object-link key, one file each.
 */
export function localSecret(dataDir: string, fileName: string): Buffer {
  const file = join(dataDir, fileName);
  const read = () => {
    const bytes = readFileSync(file);
    if (bytes.length < 32)
      throw new Error(
        `${file} is shorter than 32 bytes: delete it to generate a new one (what it signed stops working)`,
      );
    return bytes;
  };
  try {
    return read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(temporary, randomBytes(48), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return read();
}
