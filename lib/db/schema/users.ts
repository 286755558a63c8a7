import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { SESSION_KINDS } from '../../auth/actor';
import { id, timestamps, timestamptz } from '../columns';

export const users = pgTable(
  'users',
  {
    ...id,
    /** Stored lowercased; the unique index makes sign-up races safe. */
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    phoneNumbers: text('phone_numbers').array().notNull().default(sql`'{}'::text[]`),
    isEmailVerified: boolean('is_email_verified').notNull().default(false),
    emailVerifiedAt: timestamptz('email_verified_at'),
    onboardingStatus: text('onboarding_status').notNull().default('not_started'),
    onboardingStep: integer('onboarding_step').notNull().default(0),
    userType: text('user_type'),
    /** 'standard' or 'extraction_only' (custodian accounts of the desktop extractor; cannot sign in). */
    accountKind: text('account_kind').notNull().default('standard'),
    isActive: boolean('is_active').notNull().default(true),
    isSuperAdmin: boolean('is_super_admin').notNull().default(false),
    termsAcceptedAt: timestamptz('terms_accepted_at'),
    termsVersion: text('terms_version'),
    deletedAt: timestamptz('deleted_at'),
    /** Last sign-in or token refresh: the members list's lastActivityAt. */
    lastActiveAt: timestamptz('last_active_at'),
    ...timestamps,
  },
  (t) => [uniqueIndex('users_email_key').on(t.email)],
);

/**
 * Every credential is a session: a login (refresh token hash here, short JWTs carry the id), a
 * scoped automation token, or a legacy full-access token. Deleting or revoking the row ends it.
 */
export const sessions = pgTable(
  'sessions',
  {
    ...id,
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: SESSION_KINDS }).notNull(),
    tokenHash: text('token_hash').notNull(),
    label: text('label'),
    scopes: text('scopes').array(),
    expiresAt: timestamptz('expires_at').notNull(),
    revokedAt: timestamptz('revoked_at'),
    lastUsedAt: timestamptz('last_used_at'),
    createdIp: text('created_ip'),
    /** The User-Agent header of the request that created the session (shown in GET /auth/sessions). */
    createdUserAgent: text('created_user_agent'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('sessions_token_hash_key').on(t.tokenHash),
    index('sessions_user_kind_idx').on(t.userId, t.kind, t.createdAt),
  ],
);

/**
 * The address groups (IPv4 address, IPv6 /64: lib/rate-limit addressGroup) a user signed in from,
 * with the last time: a known address is not locked out by failed sign-ins from elsewhere
 * (lib/auth/index.ts). Written on each successful sign-in, never on a failure.
 */
export const signInAddresses = pgTable(
  'sign_in_addresses',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    addressGroup: text('address_group').notNull(),
    lastSignedInAt: timestamptz('last_signed_in_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.addressGroup] }),
    index('sign_in_addresses_last_idx').on(t.lastSignedInAt),
  ],
);

/** Single-purpose emailed tokens (verify email, reset password), stored hashed, used once. */
export const emailTokens = pgTable(
  'email_tokens',
  {
    ...id,
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose', { enum: ['verify_email', 'reset_password'] }).notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('email_tokens_token_hash_key').on(t.tokenHash),
    index('email_tokens_user_idx').on(t.userId, t.purpose),
  ],
);
