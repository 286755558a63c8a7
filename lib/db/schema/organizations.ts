import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { CADENCES } from '../../billing/tiers';
import { INVITATION_STATUSES } from '../../organizations/invitations/statuses';
import { ROLES_BY_RANK } from '../../organizations/roles';
import { id, timestamps, timestamptz } from '../columns';
import { users } from './users';

/** An organization's postal address: every line optional. */
export interface PostalAddress {
  line1?: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  country?: string;
}

export const organizations = pgTable(
  'organizations',
  {
    ...id,
    name: text('name').notNull(),
    /**
     * What names are unique on: NFKC, invisible characters removed, case and Unicode confusables
     * folded (lib/organizations/name-key.ts). The default is a unique placeholder (U+200B and a
     * random id) for rows written by SQL; the application replaces it before comparing names.
     */
    nameKey: text('name_key').notNull().default(sql`(chr(8203) || gen_random_uuid()::text)`),
    slug: text('slug').notNull(),
    email: text('email').notNull().default(''),
    contact: text('contact').notNull().default(''),
    city: text('city').notNull().default(''),
    state: text('state').notNull().default(''),
    country: text('country').notNull().default(''),
    description: text('description').notNull().default(''),
    phone: text('phone').array().notNull().default(sql`'{}'::text[]`),
    logo: text('logo'),
    isActive: boolean('is_active').notNull().default(true),
    isPriority: boolean('is_priority').notNull().default(false),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    type: text('type').notNull().default('law_firm'),
    version: text('version', { enum: ['v1', 'v2', 'eu', 'ca'] })
      .notNull()
      .default('v2'),
    autoAcceptInvitations: boolean('auto_accept_invitations').notNull().default(false),
    /** 'free' (no billing yet), 'legacy' (old subscription) or 'pay_as_you_go' (self-serve tier). */
    billingMode: text('billing_mode', { enum: ['free', 'legacy', 'pay_as_you_go'] })
      .notNull()
      .default('free'),
    billingTier: text('billing_tier'),
    billingCadence: text('billing_cadence', { enum: CADENCES }),
    hasPaymentMethod: boolean('has_payment_method').notNull().default(false),
    /** Since when the current base fee is unpaid with no way to collect it (declined, or no card); null while paid or collectable. */
    baseFeeFailedAt: timestamptz('base_fee_failed_at'),
    /** Charge key of the base fee of the current period (billing_rows.charge_key); null before a tier is selected. */
    baseFeeChargeKey: text('base_fee_charge_key'),
    /** The customer at the payment processor; null until created (after commit, retried by maintenance). */
    processorCustomerId: text('processor_customer_id'),
    /** The postal address (UpdateOrganizationDto `address`); null until set. Separate from the legacy city/state/country fields. */
    address: jsonb('address').$type<PostalAddress>(),
    communicationPreferences: jsonb('communication_preferences').$type<Record<string, unknown>>().notNull().default({}),
    /** First acceptance of the bank-linking terms still in force, and who accepted; both null when not accepted (or withdrawn). */
    bankLinkingTermsAcceptedAt: timestamptz('bank_linking_terms_accepted_at'),
    bankLinkingTermsAcceptedById: uuid('bank_linking_terms_accepted_by_id').references(() => users.id, {
      onDelete: 'set null',
    }),
    /** Current base-fee period of a self-serve tier. */
    billingPeriodStart: timestamptz('billing_period_start'),
    billingPeriodEnd: timestamptz('billing_period_end'),
    paymentMethodLast4: text('payment_method_last4'),
    /** Prepaid credits in cents; charges draw on them first. Never below zero (checked). */
    creditBalanceCents: integer('credit_balance_cents').notNull().default(0),
    /** Share of each charge that credits may pay, 0..100. */
    creditDeductPercentage: integer('credit_deduct_percentage').notNull().default(100),
    ...timestamps,
  },
  (t) => [
    check('organizations_credit_balance_nonnegative', sql`${t.creditBalanceCents} >= 0`),
    // Names are unique by their key (case, invisible characters and look-alikes folded): the
    // database enforces it, not a read before the write.
    uniqueIndex('organizations_name_key_key').on(t.nameKey),
    // Finds the placeholders still to be replaced by a computed key (usually none).
    index('organizations_name_key_pending_idx').on(t.id).where(sql`left(${t.nameKey}, 1) = chr(8203)`),
    uniqueIndex('organizations_slug_key').on(t.slug),
  ],
);

export const organizationMembers = pgTable(
  'organization_members',
  {
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ROLES_BY_RANK }).notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index('organization_members_user_idx').on(t.userId)],
);

/** The organization's allowances (the contract's activePlan). One row per organization. */
export const organizationPlans = pgTable(
  'organization_plans',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    seats: integer('seats').notNull(),
    devices: integer('devices').notNull(),
    storageBytes: bigint('storage_bytes', { mode: 'number' }).notNull(),
    isActive: boolean('is_active').notNull().default(true),
    isBetweenPlanChanges: boolean('is_between_plan_changes').notNull().default(false),
    ...timestamps,
  },
  (t) => [uniqueIndex('organization_plans_organization_key').on(t.organizationId)],
);

export const invitations = pgTable(
  'invitations',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: text('role', { enum: ROLES_BY_RANK }).notNull(),
    status: text('status', { enum: INVITATION_STATUSES }).notNull().default('pending'),
    tokenHash: text('token_hash').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
    invitedById: uuid('invited_by_id').references(() => users.id, { onDelete: 'set null' }),
    invitedUserId: uuid('invited_user_id').references(() => users.id, { onDelete: 'set null' }),
    acceptedById: uuid('accepted_by_id').references(() => users.id, { onDelete: 'set null' }),
    rejectionReason: text('rejection_reason'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('invitations_organization_email_key').on(t.organizationId, t.email),
    uniqueIndex('invitations_token_hash_key').on(t.tokenHash),
    index('invitations_email_idx').on(t.email),
  ],
);

/**
 * Storage promised to upload links that are not used yet: the declared size of each file, held
 * against the plan's storage cap until an import links the object (which then counts its actual
 * size on the case instead) or, once the link has lapsed unused, maintenance removes its object
 * and then the row (lib/material/lapsed-uploads.ts).
 */
export const storageReservations = pgTable(
  'storage_reservations',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    caseId: uuid('case_id').notNull(),
    objectKey: text('object_key').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('storage_reservations_object_key').on(t.objectKey),
    index('storage_reservations_organization_idx').on(t.organizationId, t.expiresAt),
    index('storage_reservations_expiry_idx').on(t.expiresAt),
  ],
);
