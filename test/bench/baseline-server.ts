import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { signAccessToken, verifyAccessToken } from '../../lib/auth/jwt';
import { addDays, now } from '../../lib/clock';
import { config } from '../../lib/config';
import { newId } from '../../lib/ids';
import { toOrganizationDetails } from '../../lib/organizations/entity';
import { hashToken, newOpaqueToken, verifyPassword } from '../../lib/secrets';

/**
 * The benchmark's baseline: POST /auth/login and GET /user/profile on bare node:http with
 * postgres.js and hand-written SQL (no middy, no drizzle, no API Gateway event). It runs the same
 * statements the service's drizzle queries emit, the same scrypt verification, the same JWT code,
 * and answers the same envelope, so `service / baseline` is the cost of the framework layers.
 *
 * Env: DATABASE_URL (required), PORT, JWT_SECRET, DB_POOL_MAX (as the service). Run by run.ts.
 */

type OrganizationRow = Parameters<typeof toOrganizationDetails>[0];
type OrganizationRole = Parameters<typeof toOrganizationDetails>[1];

/** lib/auth/sessions.ts REFRESH_TOKEN_PREFIX (not imported: that module loads drizzle). */
const REFRESH_TOKEN_PREFIX = 'cebs_rt_';

const { DATABASE_URL, PORT, DB_POOL_MAX, REFRESH_TOKEN_TTL_DAYS } = config();
if (!DATABASE_URL) throw new Error('DATABASE_URL is required');
const sql = postgres(DATABASE_URL, { max: DB_POOL_MAX, onnotice: () => {} });

interface UserRow {
  id: string;
  password_hash: string;
  is_active: boolean;
  deleted_at: Date | null;
  account_kind: string;
}

interface AuthRow {
  session_id: string;
  user_id: string;
  is_active: boolean;
  deleted_at: Date | null;
  account_kind: string;
}

interface ProfileRow {
  id: string;
  email: string;
  name: string;
  phone_numbers: string[];
  is_email_verified: boolean;
  onboarding_status: string;
  onboarding_step: number;
  user_type: string | null;
  created_at: Date;
  updated_at: Date;
  memberships: Array<{ role: OrganizationRole; organization: Record<string, unknown> }>;
}

class HttpFailure extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
  ) {
    super(code);
  }
}

/** lib/auth/sessions.ts canSignIn. */
function canSignIn(user: { is_active: boolean; deleted_at: Date | null; account_kind: string }): boolean {
  return user.is_active && user.deleted_at === null && user.account_kind === 'standard';
}

/** `to_json(organizations)` keys are snake_case and timestamps ISO strings: back to the drizzle row. */
function organizationRow(json: Record<string, unknown>): OrganizationRow {
  const row: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(json)) {
    const key = column.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
    row[key] = key.endsWith('At') && typeof value === 'string' ? new Date(value) : value;
  }
  return row as OrganizationRow;
}

/**
 * lib/users/profile.ts buildUserProfile: the user and every membership with its organization in one
 * statement (drizzle's relational query is one statement too: a lateral json aggregate).
 */
async function userProfile(userId: string) {
  const [user] = await sql<ProfileRow[]>`
    select u.id, u.email, u.name, u.phone_numbers, u.is_email_verified, u.onboarding_status,
           u.onboarding_step, u.user_type, u.created_at, u.updated_at,
           coalesce((
             select json_agg(json_build_object('role', m.role, 'organization', to_json(o)) order by m.created_at)
             from organization_members m
             join organizations o on o.id = m.organization_id
             where m.user_id = u.id
           ), '[]'::json) as memberships
    from users u
    where u.id = ${userId}
    limit 1`;
  if (!user) throw new HttpFailure(404, 'NOT_FOUND');
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    phoneNumbers: user.phone_numbers,
    isEmailVerified: user.is_email_verified,
    onboardingStatus: user.onboarding_status,
    onboardingStep: user.onboarding_step,
    userType: user.user_type,
    createdAt: user.created_at.toISOString(),
    updatedAt: user.updated_at.toISOString(),
    organizations: user.memberships.map((m) => toOrganizationDetails(organizationRow(m.organization), m.role)),
  };
}

/**
 * lib/users/profile.ts cachedUserProfile: the service answers GET /user/profile from a per-process
 * cache up to 60 seconds old (the contract allows it). Started with BASELINE_PROFILE_CACHE=1 the
 * baseline does too (one statement a request, as the service), the stricter comparison; without it
 * the baseline is the one issue 19's target was set against (two statements a request).
 */
const PROFILE_CACHE_MS = process.env.BASELINE_PROFILE_CACHE === '1' ? 60_000 : 0;
const profileCache = new Map<string, { profile: Awaited<ReturnType<typeof userProfile>>; expiresAt: number }>();

async function cachedUserProfile(userId: string) {
  const hit = profileCache.get(userId);
  if (hit && hit.expiresAt > Date.now()) return hit.profile;
  const profile = await userProfile(userId);
  profileCache.set(userId, { profile, expiresAt: Date.now() + PROFILE_CACHE_MS });
  return profile;
}

/** lib/auth/index.ts login: user by email, scrypt, session row, last activity, JWT, profile. */
async function login(body: unknown, ip: string | null) {
  const { email, password } = (body ?? {}) as { email?: unknown; password?: unknown };
  if (typeof email !== 'string' || typeof password !== 'string') throw new HttpFailure(400, 'VALIDATION_FAILED');
  const [user] = await sql<UserRow[]>`select * from users where email = ${email.toLowerCase()} limit 1`;
  if (!user || !(await verifyPassword(password, user.password_hash))) throw new HttpFailure(401, 'INVALID_CREDENTIALS');
  if (!canSignIn(user)) throw new HttpFailure(401, 'ACCOUNT_INACTIVE');

  const refreshToken = newOpaqueToken(REFRESH_TOKEN_PREFIX);
  const at = now();
  const [session] = await sql<{ id: string }[]>`
    insert into sessions (id, user_id, kind, token_hash, expires_at, created_ip, created_at, updated_at)
    values (${newId()}, ${user.id}, 'login', ${hashToken(refreshToken)}, ${addDays(at, REFRESH_TOKEN_TTL_DAYS)}, ${ip}, ${at}, ${at})
    returning id`;
  await sql`update users set last_active_at = ${at}, updated_at = ${at} where id = ${user.id}`;
  const { token: accessToken } = await signAccessToken({ userId: user.id, sessionId: session!.id });
  return { accessToken, refreshToken, userProfile: await userProfile(user.id) };
}

/** lib/auth/sessions.ts authenticateBearer (access-token branch), then the profile. */
async function profile(authorization: string | undefined) {
  const match = /^Bearer\s+(\S{1,4096})\s*$/i.exec(authorization ?? '');
  const claims = match ? await verifyAccessToken(match[1]!) : null;
  if (!claims) throw new HttpFailure(401, 'UNAUTHENTICATED');
  const [row] = await sql<AuthRow[]>`
    select s.id as session_id, s.kind, s.scopes, u.id as user_id, u.email, u.name, u.is_super_admin,
           u.is_email_verified, u.is_active, u.deleted_at, u.account_kind
    from sessions s
    inner join users u on u.id = s.user_id
    where s.id = ${claims.sessionId} and s.user_id = ${claims.userId} and s.kind = 'login'
      and s.revoked_at is null and s.expires_at > ${now()}
    limit 1`;
  if (!row || !canSignIn(row)) throw new HttpFailure(401, 'UNAUTHENTICATED');
  return cachedUserProfile(row.user_id);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'MALFORMED_JSON');
  }
}

function send(res: ServerResponse, statusCode: number, payload: unknown): void {
  res.writeHead(statusCode, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(payload));
}

const server = createServer(async (req, res) => {
  try {
    const route = `${req.method} ${new URL(req.url ?? '/', 'http://localhost').pathname}`;
    let data: unknown;
    if (route === 'GET /health') return send(res, 200, { status: 'ok' });
    else if (route === 'POST /auth/login') data = await login(await readJson(req), req.socket.remoteAddress ?? null);
    else if (route === 'GET /user/profile') data = await profile(req.headers.authorization);
    else throw new HttpFailure(404, 'ROUTE_NOT_FOUND');
    send(res, 200, { data, statusCode: 200, timestamp: now().toISOString() });
  } catch (error) {
    const failure = error instanceof HttpFailure ? error : new HttpFailure(500, 'INTERNAL');
    if (failure.statusCode === 500) console.error(error);
    send(res, failure.statusCode, {
      statusCode: failure.statusCode,
      timestamp: now().toISOString(),
      error: { code: failure.code, message: failure.code },
      requestId: null,
    });
  }
});

server.listen(PORT, process.env.HOST ?? '127.0.0.1', () => {
  console.log(`baseline on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

const shutdown = () => {
  server.close();
  void sql.end({ timeout: 5 }).finally(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
