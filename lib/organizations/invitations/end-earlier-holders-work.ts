import { and, asc, desc, eq, gte, inArray, ne, sql } from 'drizzle-orm';
import { recordAudit } from '../../audit/record';
import { currentAuditScope, SYSTEM_SCOPE, withAuditScope } from '../../audit/scope';
import type { Tx } from '../../db/client';
import { auditEvents } from '../../db/schema/audit';
import { billingRows, creditLedger } from '../../db/schema/billing';
import { cases } from '../../db/schema/cases';
import { invitations, organizationMembers, organizations } from '../../db/schema/organizations';
import { users } from '../../db/schema/users';
import type { AfterCommit } from '../../db/transaction';
import { queueEmails } from '../../mail/outbox';
import type { MailMessage } from '../../mail/transport';
import { mailTemplates } from '../../mail/templates';
import { endMembership } from '../end-membership';
import { handOverSoleOwnedCases } from '../../cases/hand-over-sole-owned-cases';
import { forgetCachedProfile } from '../../users/profile';

type Recorded = Parameters<typeof recordAudit>[1];

/**
 * Records as the service itself, with no client address: these events land in the earlier
 * holder's organizations, whose members must not learn where the rightful owner connects from.
 */
function recordAsService(tx: Tx, event: Recorded): void {
  withAuditScope({ ...SYSTEM_SCOPE, requestId: currentAuditScope().requestId }, () => recordAudit(tx, event));
}

/**
 * Since when the account's address is unproven: its creation, or the last time an organization's
 * admin changed its login email (recorded in that organization's trail). Memberships from before
 * were gained under an address someone had proven.
 */
async function unprovenSince(tx: Tx, user: { id: string; createdAt: Date }): Promise<Date> {
  const [changed] = await tx
    .select({ at: auditEvents.occurredAt })
    .from(auditEvents)
    .where(
      and(
        // Only the trails of its organizations: an admin who changed its address shares one with it.
        inArray(
          auditEvents.organizationId,
          tx
            .select({ id: organizationMembers.organizationId })
            .from(organizationMembers)
            .where(eq(organizationMembers.userId, user.id)),
        ),
        eq(auditEvents.action, 'organization.member.updated'),
        eq(auditEvents.targetType, 'user'),
        eq(auditEvents.targetId, user.id),
        sql`${auditEvents.metadata} -> 'changes' ->> 'email' is not null`,
      ),
    )
    .orderBy(desc(auditEvents.occurredAt))
    .limit(1);
  return changed && changed.at > user.createdAt ? changed.at : user.createdAt;
}

/**
 * Whether the organization holds what a delete must not take: anything billed or credited (the
 * ledgers are never deleted) or a case (its evidence and custody outlive the rows).
 */
async function holdsRecords(tx: Tx, organizationId: string): Promise<boolean> {
  const probes = [
    tx.select({ id: billingRows.id }).from(billingRows).where(eq(billingRows.organizationId, organizationId)).limit(1),
    tx
      .select({ id: creditLedger.id })
      .from(creditLedger)
      .where(eq(creditLedger.organizationId, organizationId))
      .limit(1),
    tx.select({ id: cases.id }).from(cases).where(eq(cases.organizationId, organizationId)).limit(1),
  ];
  for (const probe of probes) if ((await probe).length > 0) return true;
  return false;
}

/**
 * The takeover of an unverified account by the proven owner of its address (acceptInvitation)
 * ends what the earlier holder built with it, in the takeover's transaction:
 * - every membership gained while the address was unproven ends (case access and invitations to
 *   the address there too, as when a member is removed);
 * - an organization left without members, with nothing billed or credited and no case, is
 *   deleted (its rows go with it; its audit trail stays, as it outlives what it names);
 * - one left with members but no owner passes to its longest-standing admin (else its
 *   longest-standing member), who gets the account's sole-owned cases and an email;
 * - the account's pending invitations are withdrawn (they name the earlier holder as inviter).
 * The organization being joined (`joining`) is left as it is: the acceptor chose it, and its
 * invitation is the one being accepted.
 * Events are recorded by the service, without the acceptor's address.
 */
export async function endEarlierHoldersWork(
  tx: Tx,
  afterCommit: AfterCommit,
  user: { id: string; email: string; createdAt: Date },
  joining: string,
): Promise<void> {
  const since = await unprovenSince(tx, user);
  const held = await tx
    .select({ organizationId: organizationMembers.organizationId, role: organizationMembers.role })
    .from(organizationMembers)
    .where(
      and(
        eq(organizationMembers.userId, user.id),
        gte(organizationMembers.createdAt, since),
        ne(organizationMembers.organizationId, joining),
      ),
    )
    .orderBy(asc(organizationMembers.organizationId));
  const notices: MailMessage[] = [];
  for (const membership of held) {
    // The same lock as every membership change of the organization (lib/organizations).
    const [organization] = await tx
      .select({ id: organizations.id, name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, membership.organizationId))
      .for('no key update');
    if (!organization) continue;
    const others = await tx
      .select({
        userId: organizationMembers.userId,
        role: organizationMembers.role,
        email: users.email,
        name: users.name,
      })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(and(eq(organizationMembers.organizationId, organization.id), ne(organizationMembers.userId, user.id)))
      .orderBy(
        sql`case ${organizationMembers.role} when 'owner' then 0 when 'admin' then 1 else 2 end`,
        asc(organizationMembers.createdAt),
        asc(organizationMembers.userId),
      );
    if (others.length === 0 && !(await holdsRecords(tx, organization.id))) {
      recordAsService(tx, {
        action: 'organization.member.removed',
        organizationId: organization.id,
        target: { type: 'user', id: user.id },
        metadata: { email: user.email, role: membership.role, reason: 'account_taken_over', organizationDeleted: true },
      });
      await tx.delete(organizations).where(eq(organizations.id, organization.id));
      continue;
    }
    const heir = membership.role === 'owner' && others[0] && others[0].role !== 'owner' ? others[0] : null;
    if (heir) {
      await tx
        .update(organizationMembers)
        .set({ role: 'owner' })
        .where(
          and(eq(organizationMembers.organizationId, organization.id), eq(organizationMembers.userId, heir.userId)),
        );
      recordAsService(tx, {
        action: 'organization.member.role_changed',
        organizationId: organization.id,
        target: { type: 'user', id: heir.userId },
        metadata: { from: heir.role, to: 'owner', reason: 'owner_account_taken_over' },
      });
      notices.push(mailTemplates.ownershipPassed(heir.email, heir.name, organization.name));
      // Its profile (with its role here) may be cached in this process.
      const heirId = heir.userId;
      afterCommit(async () => forgetCachedProfile(heirId));
    }
    const handedOver =
      others.length > 0 ? await handOverSoleOwnedCases(tx, organization.id, user.id, heir?.userId ?? null) : [];
    const revoked = await endMembership(tx, organization.id, { userId: user.id, email: user.email });
    recordAsService(tx, {
      action: 'organization.member.removed',
      organizationId: organization.id,
      target: { type: 'user', id: user.id },
      metadata: {
        email: user.email,
        role: membership.role,
        reason: 'account_taken_over',
        caseAccessRemoved: revoked,
        casesHandedOver: handedOver,
      },
    });
  }
  const withdrawn = await tx
    .delete(invitations)
    .where(
      and(
        eq(invitations.invitedById, user.id),
        eq(invitations.status, 'pending'),
        ne(invitations.organizationId, joining),
      ),
    )
    .returning({
      id: invitations.id,
      organizationId: invitations.organizationId,
      email: invitations.email,
      role: invitations.role,
    });
  for (const invitation of withdrawn)
    recordAsService(tx, {
      action: 'organization.invitation.deleted',
      organizationId: invitation.organizationId,
      target: { type: 'invitation', id: invitation.id },
      metadata: { email: invitation.email, role: invitation.role, reason: 'inviter_account_taken_over' },
    });
  await queueEmails(tx, afterCommit, notices);
}
