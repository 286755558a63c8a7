import { and, eq, or, type SQL, sql } from 'drizzle-orm';
import type { CaseContext } from '../cases/context';
import { type TAG_SIDES, tags } from '../db/schema/review';

/** The side of a case a caller works for: the firm's (`org`) or opposing counsel's. */
export type TagSide = (typeof TAG_SIDES)[number];

/** Whose work product a caller's tags are: opposing counsel access makes them the other side's. */
export function reviewSide(caseContext: Pick<CaseContext, 'access'>): TagSide {
  return caseContext.access === 'opposing_counsel' ? 'opposing_council' : 'org';
}

/** Who is looking at tags, and in which case. */
export interface TagViewer {
  organizationId: string;
  caseId: string;
  side: TagSide;
  userId: string;
}

/** The viewer of a case route: its case, the caller and their side. */
export function tagViewerOf(caseContext: CaseContext, userId: string): TagViewer {
  return {
    organizationId: caseContext.case.organizationId,
    caseId: caseContext.case.id,
    side: reviewSide(caseContext),
    userId,
  };
}

/**
 * The tags a viewer may see in a case, active or not: system tags, and of their own side the
 * organization's tags, the case's tags and their own user tags of the case. A tag that is not in
 * here does not exist for the viewer (404, never 403), wherever it would show: tag lists, email
 * records, filters, search facets and custody. Tags the service or an import made (no creator
 * side) are the firm's.
 */
export function visibleTag(viewer: TagViewer): SQL {
  const ownSide = sql`coalesce(${tags.creatorAccessType}, 'org') = ${viewer.side}`;
  return and(
    eq(tags.organizationId, viewer.organizationId),
    or(
      eq(tags.type, 'system'),
      and(
        ownSide,
        or(
          eq(tags.type, 'organization'),
          and(eq(tags.type, 'case'), eq(tags.caseId, viewer.caseId)),
          and(eq(tags.type, 'user'), eq(tags.caseId, viewer.caseId), eq(tags.createdById, viewer.userId)),
        ),
      ),
    ),
  )!;
}

/**
 * The tags that count on evidence for a viewer: those they see, not deleted. A deleted (inactive)
 * tag is on nothing: not among an item's current tags, in no filter, in no facet; only the
 * links' history (`attachedTags`) still names it.
 */
export function usableTag(viewer: TagViewer): SQL {
  return and(visibleTag(viewer), eq(tags.isActive, true))!;
}
