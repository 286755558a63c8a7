import { billingSummary } from '../billing/summary';
import type { organizations } from '../db/schema/organizations';
import type { ActivePlanEntity } from './active-plan';
import type { OrganizationRole } from './roles';

type OrganizationRow = typeof organizations.$inferSelect;

/** The contract's Organization resource. `activePlan` is null unless the route loads it. */
export function toOrganizationEntity(row: OrganizationRow, activePlan: ActivePlanEntity | null = null) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    email: row.email,
    contact: row.contact,
    city: row.city,
    state: row.state,
    country: row.country,
    description: row.description,
    phone: row.phone,
    logo: row.logo,
    isActive: row.isActive,
    isPriority: row.isPriority,
    activePlan,
    metadata: row.metadata,
    address: row.address ?? null,
    communicationPreferences: row.communicationPreferences,
    bankLinkingTerms: {
      accepted: row.bankLinkingTermsAcceptedAt !== null,
      acceptedAt: row.bankLinkingTermsAcceptedAt?.toISOString() ?? null,
      acceptedBy: row.bankLinkingTermsAcceptedById,
    },
    type: row.type,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Organization details: the organization, the caller's permission in it and the billing summary. */
export function toOrganizationDetails(row: OrganizationRow, role: OrganizationRole) {
  return { organization: toOrganizationEntity(row), permission: { role }, billing: billingSummary(row) };
}

/** The answer's `invitations`: how many of the `inviteEmails` went out (emailed or added at once), how many did not for lack of seats. */
export function invitationCounts(outcome: { invited: string[]; added: string[]; notSent: string[] }) {
  return { sent: outcome.invited.length + outcome.added.length, notSent: outcome.notSent.length };
}

export type OrganizationEntity = ReturnType<typeof toOrganizationEntity>;
export type OrganizationDetails = ReturnType<typeof toOrganizationDetails>;
