import * as z from 'zod/mini';
import { CADENCES } from '../../lib/billing/tiers';
import { ROLES_BY_RANK } from '../../lib/organizations/roles';
import { DateTime, Id } from './fields';

export const OrganizationRoleEnum = z.enum(ROLES_BY_RANK);

export const PostalAddressEntity = z
  .object({
    line1: z.optional(z.string()),
    line2: z.optional(z.string()),
    city: z.optional(z.string()),
    state: z.optional(z.string()),
    postalCode: z.optional(z.string()),
    country: z.optional(z.string()),
  })
  .register(z.globalRegistry, { id: 'PostalAddressEntity' });

/** The bank-linking terms: accepted or not, and the acceptance in force (null when not accepted). */
export const BankLinkingTermsEntity = z
  .object({ accepted: z.boolean(), acceptedAt: z.nullable(DateTime), acceptedBy: z.nullable(Id) })
  .register(z.globalRegistry, { id: 'BankLinkingTermsEntity' });

export const BillingSummaryEntity = z
  .object({
    billingMode: z.enum(['free', 'pay_as_you_go']),
    onCaseBilling: z.boolean(),
    tier: z.nullable(z.string()),
    cadence: z.nullable(z.enum(CADENCES)),
    hasPaymentMethod: z.boolean(),
    delinquent: z.boolean(),
  })
  .register(z.globalRegistry, { id: 'BillingSummaryEntity' });

/**
 * The billing standing the admin organization report puts in activePlan's `subscription`: the
 * billing summary, or the legacy mode alone for a legacy-billed organization.
 */
export const ActivePlanSubscriptionEntity = z
  .union([BillingSummaryEntity, z.object({ billingMode: z.literal('legacy') })])
  .register(z.globalRegistry, { id: 'ActivePlanSubscriptionEntity' });

/** The contract's active plan: the organization's allowances and what it uses of them. */
export const ActivePlanEntity = z
  .object({
    id: Id,
    /** null on public routes; loaded only by the admin organization report. */
    subscription: z.nullable(ActivePlanSubscriptionEntity),
    /** Always null (the contract's "null or empty"). */
    relatedSubscription: z.null(),
    /** Always null. */
    organization: z.null(),
    seats: z.number(),
    seatsUsed: z.number(),
    devices: z.number(),
    deviceUsed: z.number(),
    /** Bytes. */
    storage: z.number(),
    storageUsed: z.number(),
    /** Always null (the contract's "null or empty"). */
    payments: z.null(),
    type: z.string(),
    isActive: z.boolean(),
    isBetweenPlanChanges: z.boolean(),
    storageInKb: z.number(),
    storageUsedInKb: z.number(),
    storageInMb: z.number(),
    storageUsedInMb: z.number(),
    storageInGb: z.number(),
    storageUsedInGb: z.number(),
    storageInTb: z.number(),
    storageUsedInTb: z.number(),
    isFreePlan: z.boolean(),
    remainingSeats: z.number(),
    remainingDevices: z.number(),
    /** Bytes: storage minus storageUsed, never below 0. */
    remainingStorage: z.number(),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'ActivePlanEntity' });

export const OrganizationEntity = z
  .object({
    id: Id,
    name: z.string(),
    slug: z.string(),
    email: z.string(),
    contact: z.string(),
    city: z.string(),
    state: z.string(),
    country: z.string(),
    description: z.string(),
    phone: z.array(z.string()),
    logo: z.nullable(z.string()),
    isActive: z.boolean(),
    isPriority: z.boolean(),
    activePlan: z.nullable(ActivePlanEntity),
    metadata: z.record(z.string(), z.unknown()),
    address: z.nullable(PostalAddressEntity),
    communicationPreferences: z.record(z.string(), z.unknown()),
    bankLinkingTerms: BankLinkingTermsEntity,
    type: z.string(),
    version: z.enum(['v1', 'v2', 'eu', 'ca']),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'OrganizationEntity' });

/** How many of a request's `inviteEmails` were sent (or added at once), and how many were not for lack of free seats. */
export const InvitationsSentEntity = z
  .object({ sent: z.int().check(z.minimum(0)), notSent: z.int().check(z.minimum(0)) })
  .register(z.globalRegistry, { id: 'InvitationsSentEntity' });

export const OrganizationDetailsResponseEntity = z
  .object({
    organization: OrganizationEntity,
    permission: z.object({ role: OrganizationRoleEnum }),
    billing: z.nullable(BillingSummaryEntity),
    /** Only in the answers of register and POST /organization: the `inviteEmails` sent, and those left out for lack of seats. */
    invitations: z.optional(InvitationsSentEntity),
  })
  .register(z.globalRegistry, { id: 'OrganizationDetailsResponseEntity' });
