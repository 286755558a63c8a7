import type { webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { addSeconds, now } from '../clock';
import { config } from '../config';
import { localSecret } from '../secrets';

const ALGORITHM = 'HS256';
const ISSUER = 'case-evidence-billing';
const AUDIENCE = 'case-evidence-api';

let key: { secret: string | undefined; key: Promise<webcrypto.CryptoKey> } | undefined;

/**
 * The service's secret: JWT_SECRET, or for local runs a key generated once and kept in DATA_DIR so
 * tokens survive a restart. A Lambda without JWT_SECRET refuses to start. Signs access tokens and
 * seals stored idempotent answers (lib/idempotency).
 */
export async function serviceSecretBytes(): Promise<Uint8Array> {
  await refreshCloudSecret();
  const { JWT_SECRET, DATA_DIR } = config();
  if (JWT_SECRET) return new TextEncoder().encode(JWT_SECRET);
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error('JWT_SECRET is required in the cloud');
  return new Uint8Array(localSecret(DATA_DIR, 'jwt-secret'));
}

/**
 * Cloud (infra/): the secret named by JWT_SECRET_ARN, read again past its time-to-live
 * (lib/aws/secrets.ts), so a key rotated by hand reaches warm functions without a cold start.
 */
async function refreshCloudSecret(): Promise<void> {
  if (config().JWT_SECRET_ARN) await (await import('../aws/secrets')).loadCloudSecrets();
}

/**
 * The access-token signing key, imported as a WebCrypto CryptoKey once per secret: jose works on
 * CryptoKeys, and turns raw bytes or a node KeyObject into one on every sign and verify (about half
 * the CPU of a verification, which every signed-in request runs). Imported again when the secret
 * changes; a key that cannot be read is tried again.
 */
async function signingKey(): Promise<webcrypto.CryptoKey> {
  await refreshCloudSecret();
  const secret = config().JWT_SECRET;
  if (!key || key.secret !== secret) {
    const imported = serviceSecretBytes().then((bytes) =>
      crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
    );
    key = { secret, key: imported };
    imported.catch(() => {
      if (key?.key === imported) key = undefined;
    });
  }
  return key.key;
}

export interface AccessTokenClaims {
  userId: string;
  sessionId: string;
}

export async function signAccessToken(claims: AccessTokenClaims): Promise<{ token: string; expiresAt: Date }> {
  const issuedAt = now();
  const expiresAt = addSeconds(issuedAt, config().ACCESS_TOKEN_TTL_SECONDS);
  const token = await new SignJWT({ sid: claims.sessionId })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(await signingKey());
  return { token, expiresAt };
}

/** Verifies signature (algorithm pinned), issuer, audience and expiry; null when any fails. */
export async function verifyAccessToken(token: string): Promise<AccessTokenClaims | null> {
  const secret = await signingKey(); // outside the try: a key that cannot be read is a 500, not a 401
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: now(),
    });
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null;
    return { userId: payload.sub, sessionId: payload.sid };
  } catch {
    return null;
  }
}
