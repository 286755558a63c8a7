import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { cases, organizationMembers, users } from '../../lib/db/schema';
import { expectData, invoke } from './invoke';
import { mailSink } from './setup';

let counter = 0;

/** A unique address per call, so tests in one file never collide. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}.${counter}.${randomBytes(3).toString('hex')}@example.com`;
}

export interface TestUser {
  id: string;
  email: string;
  name: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  organizationId: string;
}

/** Registers a user through the real register route (which also creates their organization). */
export async function createUser(
  overrides: { email?: string; name?: string; password?: string; organizationName?: string } = {},
): Promise<TestUser> {
  const email = overrides.email ?? uniqueEmail();
  const name = overrides.name ?? `Test User ${counter}`;
  const password = overrides.password ?? `pw-${randomBytes(6).toString('hex')}`;
  const data = expectData(
    await invoke(routes.register, {
      body: {
        name,
        email,
        password,
        acceptTerms: true,
        organizationName: overrides.organizationName ?? `Firm ${randomBytes(5).toString('hex')}`,
      },
    }),
  );
  return {
    id: data.userProfile.id,
    email,
    name,
    password,
    accessToken: data.accessToken,
    refreshToken: data.refreshToken,
    organizationId: data.organizationInfo.organization.id,
  };
}

/** Signs in again through the real login route: the user with the tokens of a new, independent session. */
export async function signIn(
  user: TestUser,
  options: { password?: string; ip?: string; userAgent?: string } = {},
): Promise<TestUser> {
  const tokens = expectData<{ accessToken: string; refreshToken: string }>(
    await invoke(routes.login, {
      body: { email: user.email, password: options.password ?? user.password },
      ip: options.ip,
      headers: options.userAgent ? { 'user-agent': options.userAgent } : {},
    }),
  );
  return { ...user, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
}

/** Changes a user row directly, for states no route reaches (inactive, extraction-only, super admin). */
export async function updateUserRow(userId: string, changes: Partial<typeof users.$inferInsert>): Promise<void> {
  await db().update(users).set(changes).where(eq(users.id, userId));
}

/** Messages the local sink received for an address, oldest first. */
export function emailsTo(address: string) {
  return mailSink.messages.filter((m) => m.to === address.toLowerCase());
}

/** The `token=` value of the newest email to `address` whose subject contains `subject`. */
export function tokenFromEmail(address: string, subject: string): string {
  const message = emailsTo(address)
    .filter((m) => m.subject.includes(subject))
    .at(-1);
  if (!message) throw new Error(`No email "${subject}" to ${address}`);
  const token = new URL(/https?:\/\/\S+/.exec(message.text)![0]).searchParams.get('token');
  if (!token) throw new Error('Email has no token link');
  return token;
}

/** A new user who is a member of `organizationId` with `role` (rows written directly; invitation routes have their own tests). */
export async function addMember(
  organizationId: string,
  role: (typeof organizationMembers.$inferInsert)['role'],
): Promise<TestUser> {
  const member = await createUser();
  await db().insert(organizationMembers).values({ organizationId, userId: member.id, role });
  return member;
}

/** A case row in an organization (the case routes come with the case-material work). */
export async function createCaseRow(organizationId: string, values: Partial<typeof cases.$inferInsert> = {}) {
  const [row] = await db()
    .insert(cases)
    .values({ organizationId, name: `Case ${randomBytes(3).toString('hex')}`, ...values })
    .returning();
  return row!;
}

/** The user's row as stored. */
export const userRow = async (id: string) => (await db().select().from(users).where(eq(users.id, id)))[0]!;

/** Verifies `user`'s email address with the token of the verification email they were sent. */
export const verifyEmailOf = async (user: TestUser) =>
  expectData(
    await invoke(routes.verifyEmail, {
      body: { token: tokenFromEmail(user.email, 'Verify your email address'), email: user.email },
    }),
  );
