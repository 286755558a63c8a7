import { caseWithAccess } from '../cases/access';

/**
 * Case material is readable by anyone holding access to the case in an organization they belong
 * to. Opposing counsel read through profile visibility (see the queries that take `opposing`).
 */
export async function materialAccess(caseId: string, userId: string) {
  const found = await caseWithAccess(caseId, userId);
  return { case: found.case, opposing: found.access === 'opposing_counsel' };
}

/** Postgres prefix full-text query from free text: every word must match a word start. */
export function prefixTsQuery(text: string): string | null {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 16);
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : null;
}
