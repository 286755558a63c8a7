import { randomBytes } from 'node:crypto';
import type * as z from 'zod/mini';
import { eq, type SQL, sql } from 'drizzle-orm';
import canonicalize from 'canonicalize';
import { recordAudit } from '../audit/record';
import { now } from '../clock';
import { organizations } from '../db/schema/organizations';
import { transaction } from '../db/transaction';
import { isUniqueViolation } from '../db/errors';
import type { Actor } from '../auth/actor';
import type { UpdateOrganizationDto } from '../../schemas/organization/organization';
import type { OrganizationContext } from './context';
import { OrganizationNameTakenError } from './errors';
import { loadOrganization, type OrganizationRow } from './load';
import { toOrganizationDetails } from './entity';
import { organizationNameKey } from './name-key';
import { slugify } from './insert-organization';
import { isOrganizationNameTaken } from './validate-organization-name';

/** Columns to write, each a value or an SQL expression over the row being updated. */
type OrganizationChanges = {
  [K in keyof typeof organizations.$inferInsert]?: (typeof organizations.$inferInsert)[K] | SQL;
};

/**
 * The columns that record the bank-linking terms: accepting keeps an acceptance already in force
 * (its time and user; computed from the row being updated, so two concurrent accepts keep the first
 * too), withdrawing clears both.
 */
function bankLinkingTermsChanges(accepted: boolean, userId: string): OrganizationChanges {
  if (!accepted) return { bankLinkingTermsAcceptedAt: null, bankLinkingTermsAcceptedById: null };
  const inForce = sql`${organizations.bankLinkingTermsAcceptedAt} is not null`;
  return {
    bankLinkingTermsAcceptedAt: sql`coalesce(${organizations.bankLinkingTermsAcceptedAt}, ${sql.param(now(), organizations.bankLinkingTermsAcceptedAt)})`,
    bankLinkingTermsAcceptedById: sql`case when ${inForce} then ${organizations.bankLinkingTermsAcceptedById} else ${userId}::uuid end`,
  };
}

/** Fields holding free-form JSON a client may fill with anything: their events name them, never their values. */
const FREE_FORM_FIELDS: ReadonlySet<string> = new Set(['metadata', 'communicationPreferences']);

/** Equal as JSON whatever the key order (a jsonb column answers its keys in its own order). */
const sameValue = (a: unknown, b: unknown) => canonicalize(a ?? null) === canonicalize(b ?? null);

/**
 * PATCH /organization/{orgId}: renaming regenerates the slug; a taken name is 400. Only the fields
 * whose value differs are written, with one `organization.updated` event naming them (none when
 * nothing differs).
 */
export async function updateOrganization(
  { actor, organization }: { actor: Actor; organization: OrganizationContext },
  input: z.output<typeof UpdateOrganizationDto>,
) {
  const { bankLinkingTermsAccepted, ...fields } = input;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await transaction(async (tx) => {
        // Locked, so the event names exactly what this request changed.
        const current = await loadOrganization(organization.id, tx, { lock: true });
        const changes: OrganizationChanges = Object.fromEntries(
          Object.entries(fields).filter(
            ([field, value]) => value !== undefined && !sameValue(value, current[field as keyof OrganizationRow]),
          ),
        );
        const changed: Record<string, unknown> = { ...changes };
        if (
          bankLinkingTermsAccepted !== undefined &&
          bankLinkingTermsAccepted !== (current.bankLinkingTermsAcceptedAt !== null)
        ) {
          Object.assign(changes, bankLinkingTermsChanges(bankLinkingTermsAccepted, actor.user.id));
          changed.bankLinkingTermsAccepted = bankLinkingTermsAccepted;
        }
        if (input.name !== undefined && changes.name !== undefined) {
          if (await isOrganizationNameTaken(tx, input.name, current.id)) throw new OrganizationNameTakenError();
          // A slug taken by another organization's name gets a random suffix on the next attempt.
          changes.slug =
            attempt === 0 ? slugify(input.name) : `${slugify(input.name)}-${randomBytes(3).toString('hex')}`;
          changes.nameKey = organizationNameKey(input.name);
          if (changes.slug !== current.slug) changed.slug = changes.slug;
        }
        if (Object.keys(changes).length === 0) return toOrganizationDetails(current, organization.role);
        const [updated] = await tx
          .update(organizations)
          .set(changes)
          .where(eq(organizations.id, organization.id))
          .returning();
        recordAudit(tx, {
          action: 'organization.updated',
          organizationId: organization.id,
          target: { type: 'organization', id: organization.id },
          metadata: {
            fields: Object.keys(changed),
            changes: Object.fromEntries(Object.entries(changed).filter(([field]) => !FREE_FORM_FIELDS.has(field))),
          },
        });
        return toOrganizationDetails(updated!, organization.role);
      });
    } catch (error) {
      if (isUniqueViolation(error, 'organizations_name_key_key')) throw new OrganizationNameTakenError();
      if (isUniqueViolation(error, 'organizations_slug_key') && input.name !== undefined && attempt < 5) continue;
      throw error;
    }
  }
}
