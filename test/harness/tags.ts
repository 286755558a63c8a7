import { eq } from 'drizzle-orm';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { tags } from '../../lib/db/schema';
import type { TestUser } from './actors';
import { addMember } from './actors';
import { caseWithOwner, memberWithAccess } from './cases';
import { expectData, invoke } from './invoke';

export type TagType = 'system' | 'organization' | 'case' | 'user';
export type TagRow = typeof tags.$inferSelect;

/**
 * A tag row written directly. `side`: the creator's side (`org`, `opposing_council`, or null as the
 * service and imports leave it). `caseId` is for case and user tags; `createdById` for user tags.
 */
export async function createTagRow(tag: {
  organizationId: string;
  caseId?: string | null;
  type: TagType;
  name: string;
  side?: 'org' | 'opposing_council' | null;
  createdById?: string | null;
  isActive?: boolean;
  origin?: 'manual' | 'auto-import';
}): Promise<TagRow> {
  const [row] = await db()
    .insert(tags)
    .values({
      organizationId: tag.organizationId,
      caseId: tag.caseId ?? null,
      name: tag.name,
      nameLowercase: tag.name.toLowerCase(),
      type: tag.type,
      creatorAccessType: tag.side ?? null,
      createdById: tag.createdById ?? null,
      isActive: tag.isActive ?? true,
      origin: tag.origin ?? 'manual',
    })
    .returning();
  return row!;
}

/** The stored row of a tag. */
export const tagRow = async (id: string): Promise<TagRow> =>
  (await db().select().from(tags).where(eq(tags.id, id)))[0]!;

/** Creates a tag through POST /cases/{caseId}/tags as `user` (201 expected); answers the Tag. */
export async function createTagAs(
  user: TestUser,
  caseId: string,
  body: { name: string; type?: 'case' | 'user'; backgroundColor?: string; textColor?: string; severity?: string },
) {
  return expectData(await invoke(routes.createCaseTag, { token: user.accessToken, path: { caseId }, body }), 201);
}

/** Creates an organization tag through POST /organization/{orgId}/tags as `user` (an owner or admin). */
export async function createOrganizationTagAs(user: TestUser, organizationId: string, body: { name: string }) {
  return expectData(
    await invoke(routes.createOrganizationTag, { token: user.accessToken, path: { orgId: organizationId }, body }),
    201,
  );
}

/**
 * A case and the people of both sides: its owner (the organization's owner), a colleague with
 * owner access, a viewer, an organization admin (no case access), and opposing counsel (a client
 * of the organization with opposing-counsel access).
 */
export async function tagPeople() {
  const { owner, caseId, organizationId } = await caseWithOwner();
  const [colleague, viewer, opposing] = await Promise.all([
    memberWithAccess(organizationId, caseId, 'owner'),
    memberWithAccess(organizationId, caseId, 'viewer'),
    memberWithAccess(organizationId, caseId, 'opposing_counsel', 'client'),
  ]);
  const admin = await addMember(organizationId, 'admin');
  return { owner, caseId, organizationId, colleague, viewer, opposing, admin };
}
