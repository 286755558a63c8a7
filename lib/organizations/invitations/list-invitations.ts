import { and, asc, desc, eq, gt, ilike, inArray, or, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { now } from '../../clock';
import { db } from '../../db/client';
import { invitations, organizationMembers, organizations } from '../../db/schema/organizations';
import { users } from '../../db/schema/users';
import type * as z from 'zod/mini';
import type { InvitationsQuery, PendingInvitationsQuery } from '../../../schemas/organization/members';
import type { Actor } from '../../auth/actor';
import { containsPattern } from '../../db/like';
import { idEquals } from '../../ids';
import { toOrganizationEntity } from '../entity';
import { NotAMemberError } from '../errors';
import { findMembership } from '../membership';
import { type PageWindow, pageWindow, toPage } from '../../paging';

const invitedBy = alias(users, 'invited_by');
const invitedUser = alias(users, 'invited_user');
const acceptedBy = alias(users, 'accepted_by');

const personOf = (row: { id: string; name: string; email: string } | null) =>
  row ? { id: row.id, name: row.name, email: row.email } : null;

type InvitationListQuery = z.output<typeof InvitationsQuery>;

/** One page of invitations with inviting, invited and accepting users and the organization: two queries. */
async function pageOfInvitations(filters: SQL[], query: InvitationListQuery, window: PageWindow) {
  const where = and(...filters);
  const sortColumn = { createdAt: invitations.createdAt, updatedAt: invitations.updatedAt, email: invitations.email }[
    query.sortBy ?? 'updatedAt'
  ];
  // "Most recently updated first" unless the caller asks for an order.
  const direction = (query.sortOrder ?? 'desc') === 'asc' ? asc : desc;
  const [[totals], rows] = await Promise.all([
    // Joined like the page query: `searchText` also matches the organization's name.
    db()
      .select({ total: sql<number>`count(*)::int` })
      .from(invitations)
      .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
      .where(where),
    db()
      .select({ invitation: invitations, organization: organizations, invitedBy, invitedUser, acceptedBy })
      .from(invitations)
      .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
      .leftJoin(invitedBy, eq(invitedBy.id, invitations.invitedById))
      .leftJoin(invitedUser, eq(invitedUser.id, invitations.invitedUserId))
      .leftJoin(acceptedBy, eq(acceptedBy.id, invitations.acceptedById))
      .where(where)
      .orderBy(direction(sortColumn), direction(invitations.id))
      .limit(window.size)
      .offset(window.offset),
  ]);
  const records = rows.map((row) => ({
    id: row.invitation.id,
    email: row.invitation.email,
    role: row.invitation.role,
    status: row.invitation.status,
    expiresAt: row.invitation.expiresAt.toISOString(),
    invitedBy: personOf(row.invitedBy),
    invitedUser: personOf(row.invitedUser),
    acceptedBy: personOf(row.acceptedBy),
    organization: toOrganizationEntity(row.organization),
    createdAt: row.invitation.createdAt.toISOString(),
    updatedAt: row.invitation.updatedAt.toISOString(),
  }));
  return toPage(window, totals!.total, records, { emptyAsNull: true });
}

function commonFilters(query: InvitationListQuery): SQL[] {
  const filters: SQL[] = [];
  if (query.status) filters.push(eq(invitations.status, query.status));
  if (query.userRole) filters.push(eq(invitations.role, query.userRole));
  if (query.searchText) {
    const pattern = containsPattern(query.searchText);
    filters.push(or(ilike(invitations.email, pattern), ilike(organizations.name, pattern))!);
  }
  return filters;
}

/** GET /organization/invitations: invitations of the caller's organizations (or the one given). */
export async function listInvitations({ actor }: { actor: Actor }, query: InvitationListQuery) {
  const mine = db()
    .select({ id: organizationMembers.organizationId })
    .from(organizationMembers)
    .where(eq(organizationMembers.userId, actor.user.id));
  const filters = commonFilters(query);
  if (query.organization) {
    // An id that is not a UUID names no organization of the caller: 403 like any other.
    if (!(await findMembership(query.organization, actor.user.id))) throw new NotAMemberError();
    filters.push(idEquals(invitations.organizationId, query.organization));
  } else {
    filters.push(inArray(invitations.organizationId, mine));
  }
  return pageOfInvitations(filters, query, pageWindow(query));
}

/** GET /organization/pending-invitations: the caller's own pending, unexpired invitations. */
export async function listPendingInvitations(
  { actor }: { actor: Actor },
  query: z.output<typeof PendingInvitationsQuery>,
) {
  // Invitations belong to whoever proves the mailbox: an account that has not verified its address
  // sees none (who invites the address, and from where, is not a registrant's to read).
  if (!actor.user.isEmailVerified) return toPage(pageWindow(query), 0, [], { emptyAsNull: true });
  const filters = [
    ...commonFilters({ ...query, status: 'pending' }),
    eq(invitations.email, actor.user.email),
    gt(invitations.expiresAt, now()),
  ];
  if (query.organization) filters.push(idEquals(invitations.organizationId, query.organization));
  return pageOfInvitations(filters, query, pageWindow(query));
}
