import { randomBytes } from 'node:crypto';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess, cases, organizationMembers } from '../../lib/db/schema';
import { createCaseRow, createUser, type TestUser } from './actors';
import { expectData, invoke } from './invoke';

/** An organization owner with a case they own, written directly as rows. */
export async function caseWithOwner() {
  const owner = await createUser();
  const [row] = await db()
    .insert(cases)
    .values({ organizationId: owner.organizationId, name: `Case ${randomBytes(3).toString('hex')}` })
    .returning();
  await db().insert(caseAccess).values({ caseId: row!.id, userId: owner.id, access: 'owner' });
  return { owner, caseId: row!.id, organizationId: owner.organizationId };
}

/** An organization owner who opened a case through POST /cases; `as` holds their request options. */
export async function ownerWithCase(name = 'Lee v. Roe') {
  const owner = await createUser();
  const as = { token: owner.accessToken, organization: owner.organizationId };
  const created = expectData(await invoke(routes.createCase, { ...as, body: { name } }), 201);
  return { owner, as, created };
}

/** A new member of the organization (role `member` or `client`) holding `access` to the case. */
export async function memberWithAccess(
  organizationId: string,
  caseId: string,
  access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel',
  role: 'member' | 'client' = 'member',
): Promise<TestUser> {
  const user = await createUser();
  await db().insert(organizationMembers).values({ organizationId, userId: user.id, role });
  await db().insert(caseAccess).values({ caseId, userId: user.id, access });
  return user;
}

/** Gives `userId` access to a case (a case_access row). */
export async function grantCase(
  caseId: string,
  userId: string,
  access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel' = 'owner',
): Promise<void> {
  await db().insert(caseAccess).values({ caseId, userId, access });
}

/** A case of `organizationId` to which `user` holds `access`. */
export async function caseWithAccess(
  organizationId: string,
  user: TestUser,
  access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel' = 'owner',
  name?: string,
) {
  const row = await createCaseRow(organizationId, name ? { name } : {});
  await grantCase(row.id, user.id, access);
  return row;
}
