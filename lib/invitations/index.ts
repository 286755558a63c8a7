import { and, eq, inArray, sql } from 'drizzle-orm';
import { addMonths, now } from '../clock';
import type { Executor } from '../db/client';
import { invitations, organizationMembers, users } from '../db/schema';
import type { AfterCommit } from '../db/transaction';
import { queueEmails } from '../mail/outbox';
import { emails } from '../mail/templates';
import type { OrganizationRole } from '../organizations/roles';
import { hashToken, newOpaqueToken } from '../secrets';

export const INVITATION_TOKEN_PREFIX = 'cebs_inv_';

interface InviteInput {
  organization: { id: string; name: string };
  inviter: { id: string; name: string } | null;
  emails: string[];
  role: OrganizationRole;
}

/**
 * Invites each address that is not yet a member: a new pending invitation, or a fresh token and
 * email for one that exists and is not accepted. Tokens are valid one month and stored hashed;
 * the emails leave through the outbox after commit. Returns the addresses invited.
 */
export async function inviteToOrganization(tx: Executor, afterCommit: AfterCommit, input: InviteInput): Promise<string[]> {
  const addresses = [...new Set(input.emails.map((e) => e.toLowerCase()))];
  if (addresses.length === 0) return [];
  const members = await tx
    .select({ email: users.email })
    .from(organizationMembers)
    .innerJoin(users, eq(users.id, organizationMembers.userId))
    .where(and(eq(organizationMembers.organizationId, input.organization.id), inArray(users.email, addresses)));
  const memberEmails = new Set(members.map((m) => m.email));
  const toInvite = addresses.filter((email) => !memberEmails.has(email));
  if (toInvite.length === 0) return [];

  const issuedAt = now();
  const tokens = new Map(toInvite.map((email) => [email, newOpaqueToken(INVITATION_TOKEN_PREFIX)]));
  const existingUsers = await tx.select({ id: users.id, email: users.email }).from(users).where(inArray(users.email, toInvite));
  const userIdByEmail = new Map(existingUsers.map((u) => [u.email, u.id]));

  await tx
    .insert(invitations)
    .values(
      toInvite.map((email) => ({
        organizationId: input.organization.id,
        email,
        role: input.role,
        status: 'pending' as const,
        tokenHash: hashToken(tokens.get(email)!),
        expiresAt: addMonths(issuedAt, 1),
        invitedById: input.inviter?.id ?? null,
        invitedUserId: userIdByEmail.get(email) ?? null,
      })),
    )
    .onConflictDoUpdate({
      target: [invitations.organizationId, invitations.email],
      set: {
        role: sql`excluded.role`,
        status: 'pending',
        tokenHash: sql`excluded.token_hash`,
        expiresAt: sql`excluded.expires_at`,
        invitedById: sql`excluded.invited_by_id`,
        invitedUserId: sql`excluded.invited_user_id`,
        updatedAt: issuedAt,
      },
      // An accepted invitation is final: it is never reissued.
      setWhere: sql`${invitations.status} <> 'accepted'`,
    });

  await queueEmails(
    tx,
    afterCommit,
    toInvite.map((email) =>
      emails.invitation(email, input.organization.name, input.organization.id, input.inviter?.name ?? null, tokens.get(email)!),
    ),
  );
  return toInvite;
}
